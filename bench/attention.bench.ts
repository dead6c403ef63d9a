// Decode attention on the Qwen3-30B-A3B shape (32 query heads, 4 KV heads of 128) at positions 100,
// 8,000 and 32,000: the per-query-head kernel (attention.wgsl, each KV head read by its 8 query heads)
// against the grouped one (attention_decode.wgsl, a workgroup per KV head), in one process, on the
// adapter's own key splits. Each position times the two in alternating rounds and keeps each one's
// fastest, so the ratio compares like with like on a shared machine. Bytes: the K and V f16 words each
// kernel reads per step (queries and partials are small beside them). The grouped kernel over a q8_0
// cache of the same context is timed beside them (its K/V bytes are 34 per 32 values).
import { adapterLabel, summarizeAdapter } from '../src/gpu/adapter.ts';
import { attentionOp, attentionPartFloats } from '../src/gpu/kernels/attention/attention.ts';
import { kvBufferBytes } from '../src/gpu/kernels/attention/kv-layout.ts';
import { encodeOps } from '../src/gpu/op.ts';
import { PipelineCache } from '../src/gpu/pipelines.ts';
import { benchBuffer, benchDevice, f16CacheWords, timeSubmits } from './gpu-bench-helpers.ts';

export const title = 'Decode attention, Qwen3-30B-A3B shape (32 / 4 heads, D 128): per query head vs grouped per KV head';

const SHAPE = { Hq: 32, Hkv: 4, D: 128 };
const POSITIONS = [100, 8000, 32000];
const ROUNDS = 3;

export async function run(): Promise<Record<string, number | string>> {
  const { device, adapter } = await benchDevice();
  const cache = new PipelineCache(device, device.features.has('shader-f16'));
  const split = cache.tuning.attention;
  const out: Record<string, number | string> = {
    adapter: adapterLabel(summarizeAdapter(adapter)), splits: `≤ ${split.splits} of ≥ ${split.minKeys} keys`,
  };
  const { Hq, Hkv, D } = SHAPE;
  const ctx = Math.max(...POSITIONS) + 1;
  const words = (ctx * Hkv * D) / 2;
  const fill = (seed: number): Uint32Array => f16CacheWords(words, seed);
  const buf = (bytes: number, data?: Uint32Array | Float32Array, u?: GPUBufferUsageFlags): GPUBuffer => benchBuffer(device, bytes, data, u);
  const kcache = buf(words * 4, fill(1));
  const vcache = buf(words * 4, fill(2));
  const q = buf(Hq * D * 4, new Float32Array(Hq * D).map((_, i) => Math.sin(i) * 0.5));
  const o = buf(Hq * D * 4);
  const part = buf(attentionPartFloats(SHAPE, split.splits) * 4);
  const step = buf(16, undefined, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  const b = { step, q, kcache, vcache, out: o, part };
  const before = attentionOp(cache, b, SHAPE, 'attention per head', { ...split, perHead: true });
  const after = attentionOp(cache, b, SHAPE, 'attention grouped', { ...split, perHead: false });
  const q8Layout = { type: 'q8_0' as const, ctx };
  const q8Words = kvBufferBytes(SHAPE, q8Layout) / 4;
  const q8Fill = (seed: number): Uint32Array => {
    const w = fill(seed).subarray(0, q8Words).slice();
    for (let i = (ctx * Hkv * Math.ceil(D / 32) * 8); i < q8Words; i++) w[i] = 0x2c002c00;   // scales 1/16
    return w;
  };
  const kq8 = buf(q8Words * 4, q8Fill(3));
  const vq8 = buf(q8Words * 4, q8Fill(4));
  const q8 = attentionOp(cache, { ...b, kcache: kq8, vcache: vq8 }, SHAPE, 'attention grouped q8_0', { ...split, perHead: false }, q8Layout);

  for (const pos of POSITIONS) {
    device.queue.writeBuffer(step, 0, new Uint32Array([1, pos, 0, 0]));
    const reps = pos >= 32000 ? 2 : 4;
    let tBefore = Infinity;
    let tAfter = Infinity;
    let tQ8 = Infinity;
    for (let r = 0; r < ROUNDS; r++) {
      tBefore = Math.min(tBefore, await timeSubmits(device, reps, (pass) => { encodeOps(pass, [before], 1); }));
      tAfter = Math.min(tAfter, await timeSubmits(device, reps, (pass) => { encodeOps(pass, [after], 1); }));
      tQ8 = Math.min(tQ8, await timeSubmits(device, reps, (pass) => { encodeOps(pass, [q8], 1); }));
    }
    const kvBytes = (heads: number): number => 2 * (pos + 1) * heads * D * 2;   // K and V, f16
    out[`pos ${pos}: per query head ms/step`] = tBefore * 1e3;
    out[`pos ${pos}: grouped ms/step`] = tAfter * 1e3;
    out[`pos ${pos}: per head / grouped`] = tBefore / tAfter;
    out[`pos ${pos}: per head K/V MB read/step`] = kvBytes(Hq) / 1e6;
    out[`pos ${pos}: grouped K/V MB read/step`] = kvBytes(Hkv) / 1e6;
    out[`pos ${pos}: grouped, q8_0 cache ms/step`] = tQ8 * 1e3;
    out[`pos ${pos}: grouped, q8_0 cache K/V MB read/step`] = (2 * (pos + 1) * Hkv * Math.ceil(D / 32) * 34) / 1e6;
  }
  [kcache, vcache, kq8, vq8, q, o, part, step].forEach((x) => x.destroy());
  return out;
}
