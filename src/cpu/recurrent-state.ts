// The CPU engine's Gated DeltaNet state, in the kernels' memory (the WASM kernels update it in place):
// per held linear layer the conv state [K−1, C] and the delta state [n_v, d_k, d_v], f32, placed once at
// engine creation, plus the tokens it has consumed. Snapshots are f32 copies in JS (they would crowd a
// 4 GiB wasm32 memory otherwise): snapshot copies out of the memory, restore copies back. The semantics
// and messages are the reference's (src/model/reference/recurrent-state.ts), so checkpoints behave alike.
import { SnapshotLimitError, SnapshotMissingError } from '../model/engine-errors.ts';
import { stateFloats, type DeltaDims } from '../model/reference/gated-delta.ts';
import { DEFAULT_MAX_SNAPSHOTS } from '../model/reference/recurrent-state.ts';
import type { WasmKernels } from './wasm-kernels.ts';

/** One layer's live state: addresses of conv [(K−1)·C] and delta [n_v·d_k·d_v] f32, and its length. */
export interface CpuLayerState { conv: number; delta: number; length: number }

interface Snapshot { conv: Float32Array; delta: Float32Array }

export class CpuRecurrentState {
  readonly dims: DeltaDims;
  readonly maxSnapshots: number;
  private readonly floats: { conv: number; delta: number };
  private readonly layers = new Map<number, CpuLayerState>();
  private readonly snapshots = new Map<number, Map<number, Snapshot>>(); // position → layer → state

  constructor(private readonly k: WasmKernels, opts: { layers: number[]; dims: DeltaDims; maxSnapshots?: number }) {
    this.dims = opts.dims;
    this.maxSnapshots = opts.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS;
    this.floats = stateFloats(opts.dims);
    for (const i of opts.layers) {
      const s = { conv: k.alloc(this.floats.conv * 4), delta: k.alloc(this.floats.delta * 4), length: 0 };
      this.layers.set(i, s);
      this.zero(s);
    }
  }

  get layerCount(): number {
    return this.layers.size;
  }

  has(layer: number): boolean {
    return this.layers.has(layer);
  }

  layer(i: number): CpuLayerState {
    const s = this.layers.get(i);
    if (!s) throw new RangeError(`CpuRecurrentState: layer ${i} is not a held linear-attention layer`);
    return s;
  }

  /** One layer's state as f32 copies (tests compare it with the reference's). */
  read(i: number): Snapshot {
    const s = this.layer(i);
    return { conv: this.k.f32(s.conv, this.floats.conv).slice(), delta: this.k.f32(s.delta, this.floats.delta).slice() };
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

  positions(): number[] {
    return [...this.snapshots.keys()].sort((a, b) => a - b);
  }

  /** Copy every layer's state at `position` out of the memory (the caller checks it is every layer's length). */
  snapshot(position: number): void {
    if (!this.snapshots.has(position) && this.snapshots.size >= this.maxSnapshots) {
      throw new SnapshotLimitError(`this engine keeps at most ${this.maxSnapshots} recurrent-state snapshots (${(this.bytesPerSnapshot() / 2 ** 20).toFixed(1)} MiB each); release one first`);
    }
    const copy = new Map<number, Snapshot>();
    for (const i of this.layers.keys()) copy.set(i, this.read(i));
    this.snapshots.set(position, copy);
  }

  release(position: number): void {
    this.snapshots.delete(position);
  }

  canRestore(length: number): boolean {
    if (length === 0 || this.snapshots.has(length)) return true;
    for (const s of this.layers.values()) if (s.length !== length) return false;
    return true;
  }

  /** Every layer back to its state at `length` (copied into the memory); snapshots past it are dropped. */
  restore(length: number): void {
    if (!this.canRestore(length)) {
      const have = this.positions();
      throw new SnapshotMissingError(`no recurrent-state snapshot at position ${length} (snapshots at ${have.length ? have.join(', ') : 'none'}; the state is at ${this.commonLength()})`);
    }
    const snap = this.snapshots.get(length);
    for (const [i, s] of this.layers) {
      if (s.length === length) continue;
      if (length === 0) {
        this.zero(s);
      } else {
        const from = snap!.get(i)!;
        this.k.f32(s.conv, this.floats.conv).set(from.conv);
        this.k.f32(s.delta, this.floats.delta).set(from.delta);
      }
      s.length = length;
    }
    for (const p of this.snapshots.keys()) if (p > length) this.snapshots.delete(p);
  }

  clear(): void {
    this.snapshots.clear();
    for (const s of this.layers.values()) { this.zero(s); s.length = 0; }
  }

  private zero(s: CpuLayerState): void {
    this.k.f32(s.conv, this.floats.conv).fill(0);
    this.k.f32(s.delta, this.floats.delta).fill(0);
  }
}
