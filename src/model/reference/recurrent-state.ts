// The recurrent state of the Gated DeltaNet layers an engine holds, and its snapshots. Per layer: the
// conv state [K−1, C] (the last K−1 q|k|v inputs, oldest first) and the delta state [n_v, d_k, d_v],
// both f32, plus how many tokens the layer has consumed. A snapshot copies every layer's state at one
// position; going back to a position restores it (zeros at 0). This is what makes a checkpoint of a
// hybrid model: the KV of its attention layers is cut, the state of its linear layers restored.

import { SnapshotLimitError, SnapshotMissingError } from '../engine-errors.ts';
import { stateFloats, type DeltaDims } from './gated-delta.ts';

export interface LayerState {
  conv: Float32Array;          // [(K−1)·C]
  delta: Float32Array;         // [n_v·d_k·d_v]
  length: number;              // tokens consumed
}

interface Snapshot { conv: Float32Array; delta: Float32Array }

export interface RecurrentStateOptions {
  layers: number[];            // absolute indices of the linear-attention layers held
  dims: DeltaDims;
  /** Snapshots kept at most (default 66: the Generator's 64 answer checkpoints, the pinned one, one spare). */
  maxSnapshots?: number;
}

export const DEFAULT_MAX_SNAPSHOTS = 66;

export class RecurrentState {
  readonly dims: DeltaDims;
  readonly maxSnapshots: number;
  private readonly layers = new Map<number, LayerState>();
  private readonly snapshots = new Map<number, Map<number, Snapshot>>(); // position → layer → state

  constructor(opts: RecurrentStateOptions) {
    this.dims = opts.dims;
    this.maxSnapshots = opts.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS;
    const f = stateFloats(opts.dims);
    for (const i of opts.layers) this.layers.set(i, { conv: new Float32Array(f.conv), delta: new Float32Array(f.delta), length: 0 });
  }

  get layerCount(): number {
    return this.layers.size;
  }

  has(layer: number): boolean {
    return this.layers.has(layer);
  }

  layer(i: number): LayerState {
    const s = this.layers.get(i);
    if (!s) throw new RangeError(`RecurrentState: layer ${i} is not a held linear-attention layer`);
    return s;
  }

  /** Smallest token count over the held layers (Infinity when none are held). */
  commonLength(): number {
    let min = Infinity;
    for (const s of this.layers.values()) min = Math.min(min, s.length);
    return min;
  }

  /** Bytes of one snapshot (and of the live state): every held layer's conv and delta state, f32. */
  bytesPerSnapshot(): number {
    const f = stateFloats(this.dims);
    return this.layers.size * (f.conv + f.delta) * 4;
  }

  /** Positions with a snapshot, ascending. */
  positions(): number[] {
    return [...this.snapshots.keys()].sort((a, b) => a - b);
  }

  /** Copy every layer's state at `position` (the caller checks it is every layer's length). */
  snapshot(position: number): void {
    if (!this.snapshots.has(position) && this.snapshots.size >= this.maxSnapshots) {
      throw new SnapshotLimitError(`this engine keeps at most ${this.maxSnapshots} recurrent-state snapshots (${(this.bytesPerSnapshot() / 2 ** 20).toFixed(1)} MiB each); release one first`);
    }
    const copy = new Map<number, Snapshot>();
    for (const [i, s] of this.layers) copy.set(i, { conv: s.conv.slice(), delta: s.delta.slice() });
    this.snapshots.set(position, copy);
  }

  release(position: number): void {
    this.snapshots.delete(position);
  }

  /** Can every layer go back to `length` (from a snapshot there, or to zeros at 0, or by staying put)? */
  canRestore(length: number): boolean {
    if (length === 0 || this.snapshots.has(length)) return true;
    for (const s of this.layers.values()) if (s.length !== length) return false;
    return true;
  }

  /**
   * Every layer back to its state at `length`; snapshots past it are dropped (their positions' KV is
   * gone). Throws SnapshotMissingError, changing nothing, when a layer cannot get there.
   */
  restore(length: number): void {
    if (!this.canRestore(length)) {
      const have = this.positions();
      throw new SnapshotMissingError(`no recurrent-state snapshot at position ${length} (snapshots at ${have.length ? have.join(', ') : 'none'}; the state is at ${this.commonLength()})`);
    }
    const snap = this.snapshots.get(length);
    for (const [i, s] of this.layers) {
      if (s.length === length) continue;
      if (length === 0) { s.conv.fill(0); s.delta.fill(0); } else { s.conv.set(snap!.get(i)!.conv); s.delta.set(snap!.get(i)!.delta); }
      s.length = length;
    }
    for (const p of this.snapshots.keys()) if (p > length) this.snapshots.delete(p);
  }

  clear(): void {
    this.snapshots.clear();
    for (const s of this.layers.values()) { s.conv.fill(0); s.delta.fill(0); s.length = 0; }
  }
}
