// Shared by the GPU benches: a Node device, wall-clock timing of submitted work, and random models in
// canonical form (q4f16_1 codes and f16 scales drawn directly: quantizing 1.7B-sized f32 would take minutes).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requestEngineDevice } from '../src/gpu/device.ts';
import { nodeAdapter } from '../src/gpu/node-gpu.ts';
import { f32ToF16Bits, fromFloat32 } from '../src/model/tensor-utils.ts';
import type { DecoderLayerWeights, GgmlLinear, MixerWeights, ModelConfig, ModelWeights, Q4Linear, TensorData } from '../src/model/types.ts';

process.env.XDG_RUNTIME_DIR ??= mkdtempSync(path.join(tmpdir(), 'xdg-'));

export async function benchDevice(): Promise<{ device: GPUDevice; adapter: GPUAdapter }> {
  const adapter = await nodeAdapter();
  return { adapter, device: await requestEngineDevice({ adapter }) };
}

export { timeSubmits } from '../src/gpu/time-submits.ts';

/** `words` u32 of f16 pairs in [0.125, 0.25), from an LCG seeded by `seed`: a K or V cache's contents. */
export function f16CacheWords(words: number, seed: number): Uint32Array {
  const w = new Uint32Array(words);
  let s = seed;
  for (let i = 0; i < w.length; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    w[i] = (0x3000 | (s & 0x0fff)) | ((0x3000 | ((s >>> 16) & 0x0fff)) << 16);
  }
  return w;
}

/** A buffer of `bytes` (rounded up to 16) with `usage` (storage by default), holding `data` when given. */
export function benchBuffer(device: GPUDevice, bytes: number, data?: Uint32Array | Float32Array, usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST): GPUBuffer {
  const b = device.createBuffer({ size: Math.ceil(bytes / 16) * 16, usage });
  if (data) device.queue.writeBuffer(b, 0, data as Uint32Array<ArrayBuffer>);
  return b;
}

let state = 0x12345678;
function fillRandom(bytes: Uint8Array): void {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  for (let i = 0; i < words.length; i++) {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
    words[i] = state >>> 0;
  }
}

export function randomQ4(name: string, rows: number, cols: number): Q4Linear {
  const q = new Uint8Array(rows * cols / 2);
  fillRandom(q);
  const scales = new Uint16Array(rows * cols / 32);
  const bits = f32ToF16Bits(0.02);
  scales.fill(bits);
  return {
    kind: 'q4f16_1', rows, cols,
    qweight: { name: `${name}.q_weight`, dtype: 'U32', shape: [rows, cols / 8], bytes: q },
    scales: { name: `${name}.q_scale`, dtype: 'F16', shape: [rows, cols / 32], bytes: new Uint8Array(scales.buffer) },
  };
}

function ones(name: string, n: number): TensorData {
  const h = new Uint16Array(n).fill(f32ToF16Bits(1));
  return { name, dtype: 'F16', shape: [n], bytes: new Uint8Array(h.buffer) };
}

export const QWEN3_1_7B: ModelConfig = {
  modelType: 'qwen3', hiddenSize: 2048, numLayers: 28, numHeads: 16, numKvHeads: 8, headDim: 128,
  intermediateSize: 6144, vocabSize: 151936, ropeTheta: 1e6, rmsNormEps: 1e-6, tieWordEmbeddings: true,
  maxPositionEmbeddings: 40960, eosTokenIds: [151645, 151643],
};

/** A random q4f16_1 model of `cfg`'s shape holding layers [0, layers) plus embedding and tied head. */
export function randomQ4Model(cfg: ModelConfig, layers: number): ModelWeights {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = cfg;
  const map = new Map<number, DecoderLayerWeights>();
  for (let i = 0; i < layers; i++) {
    const p = `model.layers.${i}`;
    // made in file order (input norm, q|k|v, q/k norms, o, post norm, gate|up, down)
    const inputNorm = ones(`${p}.input_layernorm.weight`, H);
    const qkv = randomQ4(`${p}.self_attn.c_attn`, (Hq + 2 * Hkv) * D, H);
    const qNorm = ones(`${p}.self_attn.q_norm.weight`, D);
    const kNorm = ones(`${p}.self_attn.k_norm.weight`, D);
    const o = randomQ4(`${p}.self_attn.o_proj`, H, Hq * D);
    const postNorm = ones(`${p}.post_attention_layernorm.weight`, H);
    const gateUp = randomQ4(`${p}.mlp.gate_up_proj`, 2 * I, H);
    const down = randomQ4(`${p}.mlp.down_proj`, H, I);
    map.set(i, { index: i, inputNorm, postNorm, mixer: { kind: 'attention', qkv, qNorm, kNorm, o }, ffn: { kind: 'dense', gateUp, down } });
  }
  return {
    config: { ...cfg, numLayers: layers }, format: 'mlc', layers: map,
    embedding: randomQ4('model.embed_tokens', cfg.vocabSize, H), finalNorm: ones('model.norm.weight', H),
  };
}

/**
 * A Qwen3.5-2B-shaped hybrid (as in our presets: hidden 2048, 24 layers with full attention every 4th,
 * 8 query / 2 KV heads of 256 with 64 rotary dims and an output gate; Gated DeltaNet with 16 key and
 * 16 value heads of 128, 4 conv taps; intermediate 6144; the 248k vocabulary, tied).
 */
export const QWEN3_5_2B: ModelConfig = {
  modelType: 'qwen3_5', hiddenSize: 2048, numLayers: 24, numHeads: 8, numKvHeads: 2, headDim: 256,
  intermediateSize: 6144, vocabSize: 248320, ropeTheta: 1e7, rmsNormEps: 1e-6, tieWordEmbeddings: true,
  maxPositionEmbeddings: 262144, eosTokenIds: [248044],
  hybrid: {
    layerTypes: Array.from({ length: 24 }, (_, i) => ((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention')),
    linearNumKeyHeads: 16, linearNumValueHeads: 16, linearKeyHeadDim: 128, linearValueHeadDim: 128, convKernel: 4, rotaryDim: 64,
  },
};

function f32(name: string, values: Float32Array, shape: number[]): TensorData {
  return { name, dtype: 'F32', shape, bytes: new Uint8Array(values.buffer) };
}

/** A random q4f16_1 hybrid of `cfg`'s shape holding layers [0, layers) plus embedding and tied head. */
export function randomQ4Hybrid(cfg: ModelConfig, layers: number): ModelWeights {
  const h = cfg.hybrid!;
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = cfg;
  const nk = h.linearNumKeyHeads, nv = h.linearNumValueHeads, dk = h.linearKeyHeadDim, dv = h.linearValueHeadDim, K = h.convKernel;
  const C = 2 * nk * dk + nv * dv;
  const map = new Map<number, DecoderLayerWeights>();
  for (let i = 0; i < layers; i++) {
    const p = `model.layers.${i}`;
    const mixer: MixerWeights = h.layerTypes[i] === 'full_attention'
      ? {
          kind: 'gated_attention', qkv: randomQ4(`${p}.self_attn.qkv`, 2 * (Hq + Hkv) * D, H),
          qNorm: ones(`${p}.self_attn.q_norm.weight`, D), kNorm: ones(`${p}.self_attn.k_norm.weight`, D),
          o: randomQ4(`${p}.self_attn.o_proj`, H, Hq * D),
        }
      : {
          kind: 'gated_delta_net', qkvz: randomQ4(`${p}.linear_attn.in_proj_qkvz`, C + nv * dv, H),
          ba: randomQ4(`${p}.linear_attn.in_proj_ba`, 2 * nv, H),
          conv: f32(`${p}.linear_attn.conv1d.weight`, new Float32Array(C * K).fill(0.25), [C, K]),
          a: f32(`${p}.linear_attn.A`, new Float32Array(nv).fill(-1), [nv]),
          dtBias: f32(`${p}.linear_attn.dt_bias`, new Float32Array(nv).fill(0.5), [nv]),
          norm: ones(`${p}.linear_attn.norm.weight`, dv), out: randomQ4(`${p}.linear_attn.out_proj`, H, nv * dv), valueHeads: 'grouped',
        };
    map.set(i, {
      index: i, inputNorm: ones(`${p}.input_layernorm.weight`, H), postNorm: ones(`${p}.post_attention_layernorm.weight`, H), mixer,
      ffn: { kind: 'dense', gateUp: randomQ4(`${p}.mlp.gate_up_proj`, 2 * I, H), down: randomQ4(`${p}.mlp.down_proj`, H, I) },
    });
  }
  return {
    config: { ...cfg, numLayers: layers, hybrid: { ...h, layerTypes: h.layerTypes.slice(0, layers) } }, format: 'mlc', layers: map,
    embedding: randomQ4('model.embed_tokens', cfg.vocabSize, H), finalNorm: ones('model.norm.weight', H),
  };
}

const Q4K_BLOCK_BYTES = 144;   // d, dmin (f16), 12 bytes of 6-bit scales and mins, 128 bytes of nibbles

/** A random Q4_K matrix as ggml stores it (random scales and nibbles; d and dmin small f16s). */
export function randomQ4K(name: string, rows: number, cols: number): GgmlLinear {
  if (cols % 256 !== 0) throw new RangeError(`Q4_K needs cols a multiple of 256, got ${cols}`);
  const blocks = rows * cols / 256;
  const bytes = new Uint8Array(blocks * Q4K_BLOCK_BYTES);
  fillRandom(bytes);
  const d = f32ToF16Bits(0.002);
  const dmin = f32ToF16Bits(0.001);
  const view = new DataView(bytes.buffer);
  for (let b = 0; b < blocks; b++) {
    view.setUint16(b * Q4K_BLOCK_BYTES, d, true);
    view.setUint16(b * Q4K_BLOCK_BYTES + 2, dmin, true);
  }
  return { kind: 'ggml', rows, cols, segments: [{ name, type: 'Q4_K', rows, bytes }] };
}

/** Qwen3-30B-A3B's layer shape (hidden 2048, 32/4 heads of 128, 128 experts, top-8 of I_e 768). */
export const QWEN3_30B_A3B: ModelConfig = {
  modelType: 'qwen3_moe', hiddenSize: 2048, numLayers: 48, numHeads: 32, numKvHeads: 4, headDim: 128,
  intermediateSize: 6144, vocabSize: 151936, ropeTheta: 1e6, rmsNormEps: 1e-6, tieWordEmbeddings: false,
  maxPositionEmbeddings: 40960, eosTokenIds: [151645, 151643],
  moe: { numExperts: 128, numExpertsPerTok: 8, moeIntermediateSize: 768, normTopkProb: true, decoderSparseStep: 1, mlpOnlyLayers: [] },
};

/**
 * Random Q4_K layers [0, layers) of `cfg` (no embedding or head: the layers alone are timed). `moe`:
 * Qwen3 MoE layers (F32 router, stacked experts); otherwise dense layers of intermediate
 * k·I_e — the same active parameters per token as the MoE layer.
 */
export function randomQ4KLayers(cfg: ModelConfig, layers: number, moe: boolean): ModelWeights {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D } = cfg;
  const m = cfg.moe!;
  const map = new Map<number, DecoderLayerWeights>();
  for (let i = 0; i < layers; i++) {
    const p = `blk.${i}`;
    const inputNorm = ones(`${p}.attn_norm.weight`, H);
    const mixer: MixerWeights = {
      kind: 'attention',
      qkv: randomQ4K(`${p}.attn_qkv.weight`, (Hq + 2 * Hkv) * D, H),
      qNorm: ones(`${p}.attn_q_norm.weight`, D),
      kNorm: ones(`${p}.attn_k_norm.weight`, D),
      o: randomQ4K(`${p}.attn_output.weight`, H, Hq * D),
    };
    const layer = { index: i, inputNorm, mixer, postNorm: ones(`${p}.ffn_norm.weight`, H) };
    const E = m.numExperts, I = m.moeIntermediateSize;
    if (moe) {
      const router = new Float32Array(E * H);
      for (let j = 0; j < router.length; j++) router[j] = (((j * 2654435761) >>> 0) % 1000) / 1000 - 0.5;
      map.set(i, {
        ...layer,
        ffn: { kind: 'moe', moe: {
          numExperts: E, topK: m.numExpertsPerTok, normTopkProb: m.normTopkProb, intermediate: I,
          router: { kind: 'dense', rows: E, cols: H, weight: fromFloat32(`${p}.ffn_gate_inp.weight`, router, [E, H], 'F32') },
          gate: randomQ4K(`${p}.ffn_gate_exps.weight`, E * I, H),
          up: randomQ4K(`${p}.ffn_up_exps.weight`, E * I, H),
          down: randomQ4K(`${p}.ffn_down_exps.weight`, E * H, I),
        } },
      });
    } else {
      const Ia = m.numExpertsPerTok * I;
      map.set(i, { ...layer, ffn: { kind: 'dense', gateUp: randomQ4K(`${p}.ffn_gate_up.weight`, 2 * Ia, H), down: randomQ4K(`${p}.ffn_down.weight`, H, Ia) } });
    }
  }
  const config: ModelConfig = moe ? { ...cfg, numLayers: layers } : { ...cfg, modelType: 'qwen3', numLayers: layers, intermediateSize: m.numExpertsPerTok * m.moeIntermediateSize, moe: undefined };
  if (!moe) delete (config as { moe?: unknown }).moe;
  return { config, format: 'gguf', layers: map };
}
