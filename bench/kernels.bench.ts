// Decode matvec bandwidth against the roofline of this adapter: a plain copy kernel's GB/s, measured in
// the same run. The figure that matters is the ratio (target ≥ 0.8). Shapes are Qwen3-1.7B's linears
// for one token, in q4f16_1, GGUF Q4_K (read as stored) and BF16, in the layout the start-up tuning picks
// (its timings are printed); `Q4_K / q4f16_1` compares the two 4-bit formats on the same adapter.
// On a shared machine the load changes by the second: each shape's matvec and the copy are timed in
// alternating rounds and each keeps its fastest round, so a ratio compares like with like.
import { adapterLabel, summarizeAdapter } from '../src/gpu/adapter.ts';
import { autotune } from '../src/gpu/autotune.ts';
import { uploadLinear } from '../src/gpu/gpu-weights.ts';
import { copyOp } from '../src/gpu/kernels/common/copy.ts';
import { Epilogue, linearOps } from '../src/gpu/kernels/linear/linear.ts';
import { destroyOps, encodeOps } from '../src/gpu/op.ts';
import { PipelineCache } from '../src/gpu/pipelines.ts';
import { describeTuning } from '../src/gpu/tuning.ts';
import { fromFloat32 } from '../src/model/tensor-utils.ts';
import type { Linear } from '../src/model/types.ts';
import { benchDevice, randomQ4, randomQ4K, timeSubmits } from './gpu-bench-helpers.ts';

export const title = 'WebGPU kernels: decode matvec GB/s vs a plain copy (roofline ratio), Qwen3-1.7B shapes';

const REPS = 5;
const PER_SUBMIT = 4;

/** Qwen3-1.7B's linears [N, K] (hidden 2048, 16/8 heads of 128, intermediate 6144). */
const SHAPES: [string, number, number][] = [
  ['qkv', 4096, 2048], ['o', 2048, 2048], ['gate_up', 12288, 2048], ['down', 2048, 6144],
];

function randomBf16(rows: number, cols: number): Linear {
  const v = new Float32Array(rows * cols);
  for (let i = 0; i < v.length; i++) v[i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
  return { kind: 'dense', rows, cols, weight: fromFloat32('w', v, [rows, cols], 'BF16') };
}

export async function run(): Promise<Record<string, number | string>> {
  const { device, adapter } = await benchDevice();
  const useF16 = device.features.has('shader-f16');
  const base = new PipelineCache(device, useF16);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const out: Record<string, number | string> = { adapter: adapterLabel(summarizeAdapter(adapter)), path: useF16 ? 'shader-f16' : 'f32' };

  const tuned = await autotune(base, ['q4', 'ggml', 'dense']);
  for (const m of tuned.measured) out[`tuning: ${m.format} ${m.kind} ${m.layout} µs`] = m.microseconds;
  out['tuning: chosen'] = describeTuning(tuned.tuning);
  const cache = base.withTuning(tuned.tuning);

  // copy: 32 MiB read + 32 MiB written per dispatch
  const copyBytes = 32 * 2 ** 20;
  const src = device.createBuffer({ size: copyBytes, usage });
  const dst = device.createBuffer({ size: copyBytes, usage });
  const copy = copyOp(cache, { src, dst }, copyBytes / 16, 256);
  const copyOnce = (): Promise<number> => timeSubmits(device, 1, (pass) => { for (let i = 0; i < PER_SUBMIT; i++) copy.encode(pass, 1); });
  const copyGBsOf = (t: number): number => (2 * copyBytes * PER_SUBMIT) / t / 1e9;
  out['copy GB/s (read + write)'] = copyGBsOf(await timeSubmits(device, REPS, (pass) => { for (let i = 0; i < PER_SUBMIT; i++) copy.encode(pass, 1); }));

  const step = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(step, 0, new Uint32Array([1, 0, 0, 0]));
  let worst = Infinity;
  const bench = async (label: string, w: Linear): Promise<void> => {
    const g = uploadLinear(device, w, device.limits.maxStorageBufferBindingSize);
    const x = device.createBuffer({ size: w.cols * 4, usage });
    const y = device.createBuffer({ size: w.rows * 4, usage });
    const ops = linearOps(cache, g, { step, x, y, outStride: w.rows, epilogue: Epilogue.STORE });
    let tMatvec = Infinity;
    let tCopy = Infinity;
    for (let r = 0; r < REPS; r++) {
      tCopy = Math.min(tCopy, await copyOnce());
      tMatvec = Math.min(tMatvec, await timeSubmits(device, 1, (pass) => { for (let i = 0; i < PER_SUBMIT; i++) encodeOps(pass, ops, 1); }));
    }
    const gbs = (g.bytes * PER_SUBMIT) / tMatvec / 1e9;
    out[`${label} GB/s`] = gbs;
    out[`${label} / copy`] = gbs / copyGBsOf(tCopy);
    worst = Math.min(worst, gbs / copyGBsOf(tCopy));
    destroyOps(ops);
    g.chunks.forEach((c) => c.buffers.forEach((b) => b.destroy()));
    x.destroy();
    y.destroy();
  };
  for (const [name, N, K] of SHAPES) await bench(`q4f16_1 ${name} [${N}, ${K}]`, randomQ4(name, N, K));
  for (const [name, N, K] of SHAPES) await bench(`Q4_K ${name} [${N}, ${K}]`, randomQ4K(name, N, K));
  for (const [name, N, K] of SHAPES) await bench(`BF16 ${name} [${N}, ${K}]`, randomBf16(N, K));
  // each against the copy timed beside it, so the load of the moment cancels
  for (const [name, N, K] of SHAPES) {
    const q4k = out[`Q4_K ${name} [${N}, ${K}] / copy`] as number;
    out[`Q4_K / q4f16_1 (each / copy), ${name}`] = q4k / (out[`q4f16_1 ${name} [${N}, ${K}] / copy`] as number);
  }
  out['worst matvec / copy'] = worst;
  src.destroy();
  dst.destroy();
  out['pipelines compiled'] = cache.size;
  device.destroy();
  return out;
}
