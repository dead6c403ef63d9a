// Runs single kernels through the engine's own pipeline cache and op builders, for the kernel tests.
import { encodeOps, type Op } from '../../src/gpu/op.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import type { Tuning } from '../../src/gpu/tuning.ts';

export class KernelHarness {
  readonly cache: PipelineCache;
  readonly step: GPUBuffer;
  private readonly owned: GPUBuffer[] = [];

  constructor(readonly device: GPUDevice, useF16: boolean, tuning?: Tuning) {
    this.cache = new PipelineCache(device, useF16, tuning);
    this.step = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.owned.push(this.step);
  }

  buffer(data: Float32Array | Uint32Array | number, usage = GPUBufferUsage.STORAGE): GPUBuffer {
    const bytes = typeof data === 'number' ? data : data.byteLength;
    const b = this.device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 16) * 16), usage: usage | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    if (typeof data !== 'number') this.device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>);
    this.owned.push(b);
    return b;
  }

  uniform(words: number[]): GPUBuffer {
    const b = this.buffer(new Uint32Array([...words, 0, 0, 0, 0].slice(0, 4)), GPUBufferUsage.UNIFORM);
    return b;
  }

  async run(ops: Op[], n: number, pos0 = 0): Promise<void> {
    this.device.queue.writeBuffer(this.step, 0, new Uint32Array([n, pos0, 0, 0]));
    this.device.pushErrorScope('validation');
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    encodeOps(pass, ops, n);
    pass.end();
    this.device.queue.submit([enc.finish()]);
    const err = await this.device.popErrorScope();
    if (err) throw new Error(err.message);
    await this.device.queue.onSubmittedWorkDone();
  }

  async read(b: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    const staging = this.device.createBuffer({ size: Math.ceil(bytes / 4) * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(b, 0, staging, 0, Math.ceil(bytes / 4) * 4);
    this.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = staging.getMappedRange().slice(0, bytes);
    staging.destroy();
    return out;
  }

  async readF32(b: GPUBuffer, count: number): Promise<Float32Array> {
    return new Float32Array(await this.read(b, count * 4));
  }

  destroy(): void {
    this.owned.forEach((b) => b.destroy());
  }
}
