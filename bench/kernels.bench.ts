// Matvec bandwidth against the roofline of this adapter: a plain copy kernel's GB/s, measured in the same
// run. The figure that matters is the ratio (target ≥ 0.8). Shapes are Qwen3-1.7B's: gate|up
// [12288, 2048] in q4f16_1 and down-sized [6144, 2048] in BF16, one token (decode).
import { adapterLabel, summarizeAdapter } from '../src/gpu/adapter.ts';
import { uploadLinear } from '../src/gpu/gpu-weights.ts';
import { copyOp } from '../src/gpu/kernels/copy.ts';
import { Epilogue, linearOps } from '../src/gpu/kernels/linear.ts';
import { encodeOps } from '../src/gpu/op.ts';
import { PipelineCache } from '../src/gpu/pipelines.ts';
import { fromFloat32 } from '../src/model/tensor-utils.ts';
import type { Linear } from '../src/model/types.ts';
import { benchDevice, randomQ4, timeSubmits } from './gpu-bench-helpers.ts';

export const title = 'WebGPU kernels: matvec GB/s vs a plain copy (roofline ratio), decode shapes of Qwen3-1.7B';

const REPS = 5;
const PER_SUBMIT = 4;

export async function run(): Promise<Record<string, number | string>> {
  const { device, adapter } = await benchDevice();
  const useF16 = device.features.has('shader-f16');
  const cache = new PipelineCache(device, useF16);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const out: Record<string, number | string> = { adapter: adapterLabel(summarizeAdapter(adapter)), path: useF16 ? 'shader-f16' : 'f32' };

  // copy: 32 MiB read + 32 MiB written per dispatch
  const copyBytes = 32 * 2 ** 20;
  const src = device.createBuffer({ size: copyBytes, usage });
  const dst = device.createBuffer({ size: copyBytes, usage });
  const count = copyBytes / 16;
  const copy = copyOp(cache, { src, dst }, count, 256);
  const tCopy = await timeSubmits(device, REPS, (pass) => { for (let i = 0; i < PER_SUBMIT; i++) copy.encode(pass, 1); });
  const copyGBs = (2 * copyBytes * PER_SUBMIT) / tCopy / 1e9;
  out['copy GB/s (read + write)'] = copyGBs;

  const step = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(step, 0, new Uint32Array([1, 0, 0, 0]));
  const bench = async (label: string, w: Linear): Promise<void> => {
    const g = uploadLinear(device, w, device.limits.maxStorageBufferBindingSize);
    const x = device.createBuffer({ size: w.cols * 4, usage });
    const y = device.createBuffer({ size: w.rows * 4, usage });
    const ops = linearOps(cache, g, { step, x, y, outStride: w.rows, epilogue: Epilogue.STORE });
    const t = await timeSubmits(device, REPS, (pass) => { for (let i = 0; i < PER_SUBMIT; i++) encodeOps(pass, ops, 1); });
    const gbs = (g.bytes * PER_SUBMIT) / t / 1e9;
    out[`${label} matvec GB/s`] = gbs;
    out[`${label} matvec / copy`] = gbs / copyGBs;
    out[`${label} matvec µs per call`] = (t / PER_SUBMIT) * 1e6;
  };
  await bench('q4f16_1 [12288, 2048]', randomQ4('gate_up', 12288, 2048));
  const bf = new Float32Array(6144 * 2048);
  for (let i = 0; i < bf.length; i++) bf[i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
  await bench('BF16 [6144, 2048]', { kind: 'dense', rows: 6144, cols: 2048, weight: fromFloat32('w', bf, [6144, 2048], 'BF16') });
  out['pipelines compiled'] = cache.size;
  device.destroy();
  return out;
}
