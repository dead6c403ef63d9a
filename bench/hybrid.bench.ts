// Issue 14, acceptance 4: a Qwen3.5-2B-shaped hybrid beside a Qwen3-1.7B-shaped dense model on the same
// adapter, both random q4f16_1 (the engine's quantized format; the ggml kernels are not there yet).
// Each holds a subset of its layers plus embedding and tied head (BENCH_HYBRID_LAYERS, default 4: one
// hybrid group of 3 Gated DeltaNet layers and 1 gated-attention layer), so it stays within minutes on a
// software adapter; BENCH_HYBRID_LAYERS=all holds every layer of each (a real GPU). Figures:
//   - decode tok/s of the subset through the fused decodeToken (one submit per token);
//   - per layer and per token: each kind of layer's time (its ops one by one, at the prompt's end), and
//     for a Gated DeltaNet layer its state update alone (causal conv1d, the delta rule, gated norm);
//     the same for a prefill step of 64 tokens (per token), where the delta rule walks the tokens in order;
//   - the whole model's decode time per token projected from those (layers × their time + the rest),
//     and the recurrent state's size (live, and per checkpoint snapshot) beside the KV a token adds.
import { adapterLabel, summarizeAdapter } from '../src/gpu/adapter.ts';
import { createWebGPUEngine } from '../src/gpu/create-engine.ts';
import type { WebGPUEngine } from '../src/gpu/engine.ts';
import { Generator } from '../src/model/generator.ts';
import { snapshotBytes, type ModelConfig, type ModelWeights } from '../src/model/types.ts';
import { benchDevice, QWEN3_1_7B, QWEN3_5_2B, randomQ4Hybrid, randomQ4Model } from './gpu-bench-helpers.ts';
import { decodeNext } from '../src/model/engine-types.ts';

export const title = 'Qwen3.5-2B-shaped hybrid vs Qwen3-1.7B-shaped dense on WebGPU: decode tok/s, state-update cost per token';

const LAYERS_ENV = process.env.BENCH_HYBRID_LAYERS ?? '4';
const layersOf = (c: ModelConfig): number => (LAYERS_ENV === 'all' ? c.numLayers : Math.min(c.numLayers, Number(LAYERS_ENV)));
const PROMPT = Number(process.env.BENCH_HYBRID_PROMPT ?? 32);
const DECODE = Number(process.env.BENCH_HYBRID_DECODE ?? 16);
const STATE_OPS = /conv1d|gated_delta|gated_rmsnorm/;
const PREFILL_STEP = 64;                // a prefill step of the engine (its default maxBatch)

interface LayerCost { seconds: number; state: number; prefillSeconds: number; prefillState: number }   // per token
interface Measured { decodeSeconds: number; prefillTokS: number; layers: Map<string, LayerCost>; kinds: string[] }

/** Decode time per token of the subset and each held layer's per-token time by kind. */
async function measure(weights: ModelWeights, device: GPUDevice, kindOf: (i: number) => string): Promise<Measured> {
  const ctx = PROMPT + DECODE + 8 + PREFILL_STEP;
  const engine: WebGPUEngine = await createWebGPUEngine(weights, { device, ctx });
  try {
    const g = new Generator(engine, { ctx });
    const ids = Array.from({ length: PROMPT }, (_, i) => 1000 + ((i * 7919) % 50000));
    await g.generate(ids.slice(0, 4), { maxNewTokens: 2 });        // compile every pipeline
    await g.reset();
    const r = await g.generate(ids, { maxNewTokens: 2 });
    await engine.truncate(0);
    await engine.runLayers(engine.range, 0, await engine.embed(ids));
    let id = r.ids[0] ?? 1;
    id = await decodeNext(engine, id, { temperature: 0 });          // warm the decode pipelines
    const t0 = performance.now();
    for (let i = 0; i < DECODE; i++) id = await decodeNext(engine, id, { temperature: 0 });
    const decodeSeconds = (performance.now() - t0) / 1000 / DECODE;
    const layers = new Map<string, LayerCost>();
    const at = engine.kvLength();
    const sum = (ops: { label: string; seconds: number }[], only?: RegExp) => ops.filter((o) => !only || only.test(o.label)).reduce((s, o) => s + o.seconds, 0);
    for (let i = engine.range[0]; i < engine.range[1]; i++) {
      const kind = kindOf(i);
      if (layers.has(kind)) continue;
      const decode = await engine.profileLayer(i, at);
      const prefill = await engine.profileLayer(i, at, { tokens: PREFILL_STEP, repeat: 2, reps: 3 });
      layers.set(kind, {
        seconds: sum(decode), state: sum(decode, STATE_OPS),
        prefillSeconds: sum(prefill) / PREFILL_STEP, prefillState: sum(prefill, STATE_OPS) / PREFILL_STEP,
      });
    }
    const kinds = Array.from({ length: engine.range[1] - engine.range[0] }, (_, k) => kindOf(engine.range[0] + k));
    return { decodeSeconds, prefillTokS: r.stats.prefillTokensPerSecond, layers, kinds };
  } finally {
    await engine.dispose();
  }
}

const kvBytesPerToken = (c: ModelConfig, attentionLayers: number): number => attentionLayers * 2 * c.numKvHeads * c.headDim * 2;

export async function run(): Promise<Record<string, number | string>> {
  const { device, adapter } = await benchDevice();
  const out: Record<string, number | string> = {
    adapter: adapterLabel(summarizeAdapter(adapter)), path: device.features.has('shader-f16') ? 'shader-f16' : 'f32',
    'layers held (Qwen3-1.7B-shaped / Qwen3.5-2B-shaped)': `${layersOf(QWEN3_1_7B)} / ${layersOf(QWEN3_5_2B)}`, 'prompt tokens before decode': PROMPT,
  };
  const dense = await measure(randomQ4Model(QWEN3_1_7B, layersOf(QWEN3_1_7B)), device, () => 'dense');
  const hy = QWEN3_5_2B.hybrid!;
  const hybrid = await measure(randomQ4Hybrid(QWEN3_5_2B, layersOf(QWEN3_5_2B)), device, (i) => (hy.layerTypes[i] === 'full_attention' ? 'gated attention' : 'Gated DeltaNet'));
  const ms = (s: number): number => s * 1000;

  const d = dense.layers.get('dense')!;
  const lin = hybrid.layers.get('Gated DeltaNet')!;
  const full = hybrid.layers.get('gated attention');
  out[`Qwen3-1.7B-shaped (${layersOf(QWEN3_1_7B)} of 28 layers): decode tok/s`] = 1 / dense.decodeSeconds;
  out[`Qwen3.5-2B-shaped (${layersOf(QWEN3_5_2B)} of 24 layers): decode tok/s`] = 1 / hybrid.decodeSeconds;
  out['Qwen3-1.7B-shaped: prefill tok/s (subset)'] = dense.prefillTokS;
  out['Qwen3.5-2B-shaped: prefill tok/s (subset)'] = hybrid.prefillTokS;
  out['Qwen3 layer: ms per decode token'] = ms(d.seconds);
  out['Gated DeltaNet layer: ms per decode token'] = ms(lin.seconds);
  out['Gated DeltaNet state update (conv1d + delta rule + gated norm): ms per token'] = ms(lin.state);
  out['Gated DeltaNet state update: share of its layer'] = lin.state / lin.seconds;
  out[`Qwen3 layer, prefill step of ${PREFILL_STEP}: ms per token`] = ms(d.prefillSeconds);
  out[`Gated DeltaNet layer, prefill step of ${PREFILL_STEP}: ms per token`] = ms(lin.prefillSeconds);
  out[`Gated DeltaNet state update, prefill step of ${PREFILL_STEP} (tokens in order, one dispatch): ms per token`] = ms(lin.prefillState);
  out['Gated DeltaNet state update at prefill: share of its layer'] = lin.prefillState / lin.prefillSeconds;
  if (full) out['gated attention layer: ms per decode token'] = ms(full.seconds);

  // The rest of a decode token (embedding gather, final norm, head, top-k, submit and read-back).
  const rest = (m: Measured): number => Math.max(0, m.decodeSeconds - m.kinds.reduce((s, k) => s + m.layers.get(k)!.seconds, 0));
  const linearLayers = hy.layerTypes.filter((t) => t === 'linear_attention').length;
  const fullLayers = hy.layerTypes.length - linearLayers;
  const denseFull = rest(dense) + QWEN3_1_7B.numLayers * d.seconds;
  const hybridFull = rest(hybrid) + linearLayers * lin.seconds + fullLayers * (full?.seconds ?? lin.seconds);
  out['Qwen3-1.7B-shaped, all 28 layers: projected decode tok/s'] = 1 / denseFull;
  out[`Qwen3.5-2B-shaped, all 24 layers (${linearLayers} linear + ${fullLayers} full): projected decode tok/s`] = 1 / hybridFull;
  out['Qwen3.5-2B-shaped: state updates, share of a projected decode token'] = (linearLayers * lin.state) / hybridFull;

  out['Qwen3-1.7B-shaped: KV bytes per token (28 layers)'] = kvBytesPerToken(QWEN3_1_7B, 28);
  out['Qwen3.5-2B-shaped: KV bytes per token (6 attention layers)'] = kvBytesPerToken(QWEN3_5_2B, fullLayers);
  out['Qwen3.5-2B-shaped: recurrent state MiB (live = one snapshot)'] = snapshotBytes(QWEN3_5_2B, [0, 24]) / 2 ** 20;
  device.destroy();
  return out;
}
