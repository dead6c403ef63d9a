// Prefill attention on the Qwen3-8B shape (32 query heads, 8 KV heads of 128): the per-head kernel
// (attention.wgsl, a workgroup per (query head, token), each reading the whole K/V prefix alone) against
// the tiles (attention_prefill_tiles.wgsl, a workgroup per (KV head, block of tokens) sharing each K/V tile),
// one step of STEP tokens at the start of a prompt and as the last step of a 4,096-token prompt. Alternating
// rounds, each kernel's fastest kept. On a CPU rasterizer the step and the prompt are cut to 64 and 512
// tokens so the plain `npm run bench` stays short there (its figures are no evidence of GPU speed anyway).
import { adapterLabel, summarizeAdapter } from '../src/gpu/adapter.ts';
import { attentionOp, attentionPartFloats } from '../src/gpu/kernels/attention/attention.ts';
import { prefillTiles } from '../src/gpu/kernels/attention/attention-prefill-tiles.ts';
import { encodeOps } from '../src/gpu/op.ts';
import { PipelineCache } from '../src/gpu/pipelines.ts';
import { benchBuffer, benchDevice, f16CacheWords, timeSubmits } from './gpu-bench-helpers.ts';

export const title = 'Prefill attention, Qwen3-8B shape (32 / 8 heads, D 128): per (query head, token) vs tiles per (KV head, block)';

const SHAPE = { Hq: 32, Hkv: 8, D: 128 };
const ROUNDS = 3;

export async function run(): Promise<Record<string, number | string>> {
  const { device, adapter } = await benchDevice();
  const cache = new PipelineCache(device, device.features.has('shader-f16'));
  const cpu = cache.tuning.adapterClass === 'cpu';
  const step = cpu ? 64 : 512;
  const prompt = cpu ? 512 : 4096;
  const tiles = prefillTiles(SHAPE)!;
  const out: Record<string, number | string> = {
    adapter: adapterLabel(summarizeAdapter(adapter)), 'tokens a step': step,
    tiles: `${tiles.BQ} tokens × ${SHAPE.Hq / SHAPE.Hkv} heads a block, ${tiles.BK} keys a tile`,
  };
  const { Hq, Hkv, D } = SHAPE;
  const words = (prompt * Hkv * D) / 2;
  const fill = (seed: number): Uint32Array => f16CacheWords(words, seed);
  const buf = (bytes: number, data?: Uint32Array | Float32Array, u?: GPUBufferUsageFlags): GPUBuffer => benchBuffer(device, bytes, data, u);
  const kcache = buf(words * 4, fill(1));
  const vcache = buf(words * 4, fill(2));
  const q = buf(step * Hq * D * 4, new Float32Array(step * Hq * D).map((_, i) => Math.sin(i) * 0.5));
  const o = buf(step * Hq * D * 4);
  const part = buf(attentionPartFloats(SHAPE, 1) * 4);
  const stepBuf = buf(16, undefined, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  const b = { step: stepBuf, q, kcache, vcache, out: o, part };
  const split = { splits: 1, minKeys: 64 };
  const perHead = attentionOp(cache, b, SHAPE, 'attention per head', { ...split, prefill: 'per-head' });
  const tiled = attentionOp(cache, b, SHAPE, 'attention tiles', { ...split, prefill: 'tiles' });

  for (const pos0 of [0, prompt - step]) {
    device.queue.writeBuffer(stepBuf, 0, new Uint32Array([step, pos0, 0, 0]));
    let tPerHead = Infinity;
    let tTiles = Infinity;
    for (let r = 0; r < ROUNDS; r++) {
      tPerHead = Math.min(tPerHead, await timeSubmits(device, 2, (pass) => { encodeOps(pass, [perHead], step); }));
      tTiles = Math.min(tTiles, await timeSubmits(device, 2, (pass) => { encodeOps(pass, [tiled], step); }));
    }
    const at = `${step} tokens at ${pos0}`;
    out[`${at}: per head ms`] = tPerHead * 1e3;
    out[`${at}: tiles ms`] = tTiles * 1e3;
    out[`${at}: per head / tiles`] = tPerHead / tTiles;
  }
  [kcache, vcache, q, o, part, stepBuf].forEach((x) => x.destroy());
  return out;
}
