// Submits that end in one read-back: the WebGPU engine's every call that returns data waits on one
// mapAsync (a round trip to the GPU that waits for all work before it), so a call copies all it needs into one
// staging buffer and maps it once. Staging buffers are kept per power-of-two size; a scratch storage
// buffer serves calls that stage their inputs on the device (scoreRows).
import { GpuResourceError } from './errors.ts';
import { encodeOps, type Op } from './op.ts';

export interface ReadbackHooks {
  /** One submit with this many dispatches, ending in one read-back. */
  submitted(dispatches: number): void;
  /** An error the device reported since (results are then not valid). */
  error(): Error | undefined;
}

/**
 * Where the host's time goes around the GPU's (the bench's host ms per decode token, bench/gpu): how long
 * the queue stood empty while the host encoded, submitted or handled a read-back (`idleMs`: from the
 * read-back that emptied the queue to the next submit), how many read-backs emptied it (`drains`: each one
 * waited a full GPU round trip) and the milliseconds spent encoding and submitting (`encodeMs`).
 */
export interface HostTimes {
  idleMs: number;
  drains: number;
  encodeMs: number;
}

export class Readbacks {
  private readonly stagings = new Map<number, GPUBuffer[]>();
  private readonly busy = new Set<GPUBuffer>();      // staging buffers a read-back in flight maps
  private scratchBuffer: GPUBuffer | undefined;
  private readonly times: HostTimes = { idleMs: 0, drains: 0, encodeMs: 0 };
  private inFlight = 0;
  private drainedAt: number | undefined;   // when the last read-back left no submit in flight

  constructor(private readonly device: GPUDevice, private readonly hooks: ReadbackHooks) {}

  /**
   * A mappable buffer of at least `size` bytes that no read-back in flight holds (a decode token is
   * submitted while the one before it is still being read back: each needs its own).
   */
  staging(size: number): GPUBuffer {
    const key = Math.max(256, 2 ** Math.ceil(Math.log2(size)));
    let free = this.stagings.get(key);
    if (!free) this.stagings.set(key, free = []);
    const b = free.find((x) => !this.busy.has(x)) ?? this.device.createBuffer({ label: `readback ${key}`, size: key, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    if (!free.includes(b)) free.push(b);
    return b;
  }

  /** A scratch storage buffer of at least `bytes` (grown on demand, kept for the next call). */
  scratch(bytes: number): GPUBuffer {
    if (!this.scratchBuffer || this.scratchBuffer.size < bytes) {
      this.scratchBuffer?.destroy();
      this.scratchBuffer = this.device.createBuffer({
        label: 'scratch', size: Math.max(256, 2 ** Math.ceil(Math.log2(bytes))), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
    }
    return this.scratchBuffer;
  }

  /** Host times since the engine was made (copies: callers take differences). */
  hostTimes(): HostTimes {
    return { ...this.times };
  }

  /** Submit an encoder whose copies fill `staging`, then read back its first `bytes`. `began`: when its encoding started. */
  async submit(encoder: GPUCommandEncoder, staging: GPUBuffer, bytes: number, dispatches: number, began = performance.now()): Promise<ArrayBuffer> {
    this.device.queue.submit([encoder.finish()]);
    const now = performance.now();
    this.times.encodeMs += now - began;
    if (this.inFlight === 0 && this.drainedAt !== undefined) this.times.idleMs += now - this.drainedAt;
    this.inFlight++;
    this.busy.add(staging);
    this.hooks.submitted(dispatches);
    try {
      await staging.mapAsync(GPUMapMode.READ, 0, bytes);
    } catch (e) {
      this.busy.delete(staging);
      throw e;
    } finally {
      if (--this.inFlight === 0) {
        this.drainedAt = performance.now();
        this.times.drains++;
      }
    }
    const copy = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    this.busy.delete(staging);
    const error = this.hooks.error();
    if (error) throw new GpuResourceError(`the GPU reported an error, results are not valid: ${error.message}`, { cause: error });
    return copy;
  }

  /** Encode ops in one pass, copy each region (from offset 0 of its buffer) into one staging buffer, one submit, one read-back. */
  async readMany(ops: readonly Op[], n: number, regions: readonly { src: GPUBuffer; bytes: number }[]): Promise<ArrayBuffer[]> {
    const began = performance.now();
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    const dispatches = encodeOps(pass, ops, n);
    pass.end();
    const bytes = regions.reduce((sum, r) => sum + r.bytes, 0);
    const staging = this.staging(bytes);
    let at = 0;
    for (const r of regions) {
      if (r.bytes > 0) encoder.copyBufferToBuffer(r.src, 0, staging, at, r.bytes);
      at += r.bytes;
    }
    const mapped = await this.submit(encoder, staging, bytes, dispatches, began);
    at = 0;
    return regions.map((r) => { const c = mapped.slice(at, at + r.bytes); at += r.bytes; return c; });
  }

  destroy(): void {
    for (const list of this.stagings.values()) list.forEach((b) => b.destroy());
    this.scratchBuffer?.destroy();
  }
}
