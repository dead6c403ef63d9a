// Checkpoint snapshots of the recurrent state of the Gated DeltaNet layers an engine holds, on the
// device that holds them (the GPU twin of src/model/reference/recurrent-state.ts). A layer's live state
// is two buffers, conv [K−1, C] and delta [n_v, d_k, d_v] (f32, src/gpu/mixers/gated-delta-net.ts); a snapshot
// at position p is a copy of every held layer's pair made with copyBufferToBuffer in queue order, so it
// sees exactly the state after the tokens before p. Restoring copies it back (or clears to zeros at 0).
// Nothing is read back to the CPU: a checkpoint costs one small submit of copies.
import { SnapshotLimitError, SnapshotMissingError } from '../model/engine-errors.ts';
import { DEFAULT_MAX_SNAPSHOTS } from '../model/reference/recurrent-state.ts';
import { GpuResourceError } from './errors.ts';

/** A Gated DeltaNet layer's live state on the device, and how many tokens it has consumed. */
export interface LinearState {
  index: number;
  conv: GPUBuffer;             // [(K−1)·C] f32
  delta: GPUBuffer;            // [n_v·d_k·d_v] f32
  convBytes: number;
  deltaBytes: number;
}

interface LayerCopy { conv: GPUBuffer; delta: GPUBuffer }

export class GpuSnapshots {
  private readonly snapshots = new Map<number, Map<number, LayerCopy>>();   // position → layer → copy

  constructor(
    private readonly device: GPUDevice,
    private readonly layers: readonly LinearState[],
    readonly maxSnapshots = DEFAULT_MAX_SNAPSHOTS,
  ) {}

  /** Bytes of one snapshot (and of the live state): every held linear layer's conv and delta state. */
  bytesPerSnapshot(): number {
    return this.layers.reduce((s, l) => s + l.convBytes + l.deltaBytes, 0);
  }

  positions(): number[] {
    return [...this.snapshots.keys()].sort((a, b) => a - b);
  }

  has(position: number): boolean {
    return this.snapshots.has(position);
  }

  /** Copy every layer's live state into the snapshot at `position` (replacing one there). */
  async take(position: number): Promise<void> {
    if (this.layers.length === 0) return;
    let copy = this.snapshots.get(position);
    if (!copy) {
      if (this.snapshots.size >= this.maxSnapshots) {
        throw new SnapshotLimitError(`this engine keeps at most ${this.maxSnapshots} recurrent-state snapshots (${(this.bytesPerSnapshot() / 2 ** 20).toFixed(1)} MiB each); release one first`);
      }
      copy = await this.allocate(position);
      this.snapshots.set(position, copy);
    }
    const enc = this.device.createCommandEncoder({ label: `snapshot at ${position}` });
    for (const l of this.layers) {
      const c = copy.get(l.index)!;
      enc.copyBufferToBuffer(l.conv, 0, c.conv, 0, l.convBytes);
      enc.copyBufferToBuffer(l.delta, 0, c.delta, 0, l.deltaBytes);
    }
    this.device.queue.submit([enc.finish()]);
  }

  /**
   * Every layer's live state back to `length`: from the snapshot there, zeros at 0, or untouched for a
   * layer already there (`lengthOf`). Snapshots past `length` are dropped. Throws SnapshotMissingError,
   * changing nothing, when a layer cannot get there.
   */
  restore(length: number, lengthOf: (layer: number) => number): void {
    const snap = this.snapshots.get(length);
    const moving = this.layers.filter((l) => lengthOf(l.index) !== length);
    if (moving.length > 0 && length !== 0 && !snap) {
      const have = this.positions();
      throw new SnapshotMissingError(`no recurrent-state snapshot at position ${length} (snapshots at ${have.length ? have.join(', ') : 'none'}; the state is at ${Math.min(...this.layers.map((l) => lengthOf(l.index)))})`);
    }
    if (moving.length > 0) {
      const enc = this.device.createCommandEncoder({ label: `restore to ${length}` });
      for (const l of moving) {
        if (length === 0) {
          enc.clearBuffer(l.conv, 0, l.convBytes);
          enc.clearBuffer(l.delta, 0, l.deltaBytes);
        } else {
          const c = snap!.get(l.index)!;
          enc.copyBufferToBuffer(c.conv, 0, l.conv, 0, l.convBytes);
          enc.copyBufferToBuffer(c.delta, 0, l.delta, 0, l.deltaBytes);
        }
      }
      this.device.queue.submit([enc.finish()]);
    }
    for (const p of [...this.snapshots.keys()]) if (p > length) this.release(p);
  }

  release(position: number): void {
    const copy = this.snapshots.get(position);
    if (!copy) return;
    this.snapshots.delete(position);
    for (const c of copy.values()) { c.conv.destroy(); c.delta.destroy(); }
  }

  destroy(): void {
    for (const p of [...this.snapshots.keys()]) this.release(p);
  }

  private async allocate(position: number): Promise<Map<number, LayerCopy>> {
    const usage = GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const copy = new Map<number, LayerCopy>();
    this.device.pushErrorScope('out-of-memory');
    for (const l of this.layers) {
      copy.set(l.index, {
        conv: this.device.createBuffer({ label: `layer ${l.index} conv state @${position}`, size: l.convBytes, usage }),
        delta: this.device.createBuffer({ label: `layer ${l.index} delta state @${position}`, size: l.deltaBytes, usage }),
      });
    }
    const err = await this.device.popErrorScope();
    if (err) {
      for (const c of copy.values()) { c.conv.destroy(); c.delta.destroy(); }
      throw new GpuResourceError(`a recurrent-state snapshot of ${(this.bytesPerSnapshot() / 2 ** 20).toFixed(1)} MiB does not fit on the GPU (${err.message}); keep fewer checkpoints`);
    }
    return copy;
  }
}
