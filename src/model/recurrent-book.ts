// The bookkeeping of the Gated DeltaNet state an engine holds, shared by every engine: per held linear
// layer how many tokens it has consumed, the snapshots by position (f32 copies in JS: a checkpoint), the
// limit on them, and the rules of going back (restore from a snapshot, zeros at 0, or stay put; later
// snapshots dropped; SnapshotMissingError changing nothing when a layer cannot get there). Each engine
// keeps only its storage: where a layer's conv [(K−1)·C] and delta [n_v·d_k·d_v] f32 live, and how to copy
// them out, in and to zeros (the reference: Float32Arrays, src/model/reference/recurrent-state.ts; the
// WASM engine: its kernels' memory, src/cpu/recurrent-state.ts).
import { SnapshotLimitError, SnapshotMissingError } from './engine-errors.ts';
import { stateFloats, type DeltaDims } from './reference/gated-delta.ts';

/** One layer's state as f32 copies. */
export interface StateSnapshot { conv: Float32Array; delta: Float32Array }

/** Snapshots kept at most (default 66: the Generator's 64 answer checkpoints, the pinned one, one spare). */
export const DEFAULT_MAX_SNAPSHOTS = 66;

export abstract class RecurrentStateBook<L extends { length: number }> {
  readonly dims: DeltaDims;
  readonly maxSnapshots: number;
  protected readonly floats: { conv: number; delta: number };
  protected readonly layers = new Map<number, L>();
  private readonly snapshots = new Map<number, Map<number, StateSnapshot>>(); // position → layer → state

  /** name: the class, for messages; each engine's constructor then places its layers (place). */
  protected constructor(private readonly name: string, opts: { dims: DeltaDims; maxSnapshots?: number }) {
    this.dims = opts.dims;
    this.maxSnapshots = opts.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS;
    this.floats = stateFloats(opts.dims);
  }

  /** A copy of one layer's live state. */
  protected abstract copyOut(s: L): StateSnapshot;
  /** One layer's live state set from a snapshot. */
  protected abstract copyIn(s: L, from: StateSnapshot): void;
  /** One layer's live state set to zeros (its length is the caller's). */
  protected abstract zero(s: L): void;

  get layerCount(): number {
    return this.layers.size;
  }

  has(layer: number): boolean {
    return this.layers.has(layer);
  }

  layer(i: number): L {
    const s = this.layers.get(i);
    if (!s) throw new RangeError(`${this.name}: layer ${i} is not a held linear-attention layer`);
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
    return this.layers.size * (this.floats.conv + this.floats.delta) * 4;
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
    const copy = new Map<number, StateSnapshot>();
    for (const [i, s] of this.layers) copy.set(i, this.copyOut(s));
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
      if (length === 0) this.zero(s);
      else this.copyIn(s, snap!.get(i)!);
      s.length = length;
    }
    for (const p of this.snapshots.keys()) if (p > length) this.snapshots.delete(p);
  }

  clear(): void {
    this.snapshots.clear();
    for (const s of this.layers.values()) { this.zero(s); s.length = 0; }
  }
}
