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

export class Readbacks {
  private readonly stagings = new Map<number, GPUBuffer>();
  private scratchBuffer: GPUBuffer | undefined;

  constructor(private readonly device: GPUDevice, private readonly hooks: ReadbackHooks) {}

  /** A mappable buffer of at least `size` bytes. */
  staging(size: number): GPUBuffer {
    const key = Math.max(256, 2 ** Math.ceil(Math.log2(size)));
    let b = this.stagings.get(key);
    if (!b) {
      b = this.device.createBuffer({ label: `readback ${key}`, size: key, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      this.stagings.set(key, b);
    }
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

  /** Submit an encoder whose copies fill `staging`, then read back its first `bytes`. */
  async submit(encoder: GPUCommandEncoder, staging: GPUBuffer, bytes: number, dispatches: number): Promise<ArrayBuffer> {
    this.device.queue.submit([encoder.finish()]);
    this.hooks.submitted(dispatches);
    await staging.mapAsync(GPUMapMode.READ, 0, bytes);
    const copy = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    const error = this.hooks.error();
    if (error) throw new GpuResourceError(`the GPU reported an error, results are not valid: ${error.message}`, { cause: error });
    return copy;
  }

  /** Encode ops in one pass, copy each region (from offset 0 of its buffer) into one staging buffer, one submit, one read-back. */
  async readMany(ops: readonly Op[], n: number, regions: readonly { src: GPUBuffer; bytes: number }[]): Promise<ArrayBuffer[]> {
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
    const mapped = await this.submit(encoder, staging, bytes, dispatches);
    at = 0;
    return regions.map((r) => { const c = mapped.slice(at, at + r.bytes); at += r.bytes; return c; });
  }

  destroy(): void {
    for (const b of this.stagings.values()) b.destroy();
    this.scratchBuffer?.destroy();
  }
}
