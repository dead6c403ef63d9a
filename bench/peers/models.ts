// Random weights of a Qwen3 shape, in our canonical form (q4f16_1 or BF16) and written as the same
// weights in GGUF for llama.cpp: q4f16_1 codes 0–14 with w = (q − 7)·scale are exactly Q4_0's
// w = (q' − 8)·d with q' = q + 1, d = scale; BF16 is the same bytes. q|k|v and gate|up are split back
// into llama.cpp's tensors.
import { f32ToF16Bits } from '../../src/model/tensor-utils.ts';
import type { DecoderLayerWeights, Linear, ModelConfig, ModelWeights, TensorData } from '../../src/model/types.ts';
import { GGML_TYPE, writeGguf, type GgufTensor } from './gguf-writer.ts';

export const QWEN3_0_6B: ModelConfig = {
  modelType: 'qwen3', hiddenSize: 1024, numLayers: 28, numHeads: 16, numKvHeads: 8, headDim: 128,
  intermediateSize: 3072, vocabSize: 151936, ropeTheta: 1e6, rmsNormEps: 1e-6, tieWordEmbeddings: true,
  maxPositionEmbeddings: 40960, eosTokenIds: [151645, 151643],
};

export type PeerFormat = 'q4f16_1' | 'BF16';

let state = 0x2545f491;
function nextWord(): number {
  state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
  return state >>> 0;
}

function randomQ4(name: string, rows: number, cols: number): Linear {
  const q = new Uint32Array((rows * cols) / 8);
  for (let i = 0; i < q.length; i++) {
    const w = nextWord();
    const fifteen = w & (w >>> 1) & (w >>> 2) & (w >>> 3) & 0x11111111;   // bit 0 of each nibble that is 15
    q[i] = (w ^ fifteen) >>> 0;                                          // 15 → 14: codes 0..14
  }
  const s = new Uint16Array((rows * cols) / 32);
  for (let i = 0; i < s.length; i++) s[i] = f32ToF16Bits(0.01 + (nextWord() % 1000) * 2e-5);
  return {
    kind: 'q4f16_1', rows, cols,
    qweight: { name: `${name}.q_weight`, dtype: 'U32', shape: [rows, cols / 8], bytes: new Uint8Array(q.buffer) },
    scales: { name: `${name}.q_scale`, dtype: 'F16', shape: [rows, cols / 32], bytes: new Uint8Array(s.buffer) },
  };
}

function randomBf16(name: string, rows: number, cols: number): Linear {
  const v = new Uint16Array(rows * cols);
  for (let i = 0; i < v.length; i += 2) {
    const w = nextWord();
    // sign, exponent 2^-7 .. 2^-4, 7 random mantissa bits, for two values
    v[i] = ((w & 0x8000) | ((120 + ((w >>> 7) & 3)) << 7) | (w & 0x7f));
    v[i + 1] = (((w >>> 16) & 0x8000) | ((120 + ((w >>> 23) & 3)) << 7) | ((w >>> 16) & 0x7f));
  }
  return { kind: 'dense', rows, cols, weight: { name, dtype: 'BF16', shape: [rows, cols], bytes: new Uint8Array(v.buffer) } };
}

function ones(name: string, n: number): TensorData {
  const h = new Uint16Array(n).fill(f32ToF16Bits(1));
  return { name, dtype: 'F16', shape: [n], bytes: new Uint8Array(h.buffer) };
}

/** A random model of `cfg`'s shape, every layer plus the tied embedding/head. */
export function randomPeerModel(cfg: ModelConfig, format: PeerFormat): ModelWeights {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = cfg;
  const lin = format === 'q4f16_1' ? randomQ4 : randomBf16;
  const layers = new Map<number, DecoderLayerWeights>();
  for (let i = 0; i < cfg.numLayers; i++) {
    const p = `model.layers.${i}`;
    // made in file order (input norm, q|k|v, q/k norms, o, post norm, gate|up, down)
    const inputNorm = ones(`${p}.input_layernorm.weight`, H);
    const qkv = lin(`${p}.self_attn.c_attn`, (Hq + 2 * Hkv) * D, H);
    const qNorm = ones(`${p}.self_attn.q_norm.weight`, D);
    const kNorm = ones(`${p}.self_attn.k_norm.weight`, D);
    const o = lin(`${p}.self_attn.o_proj`, H, Hq * D);
    const postNorm = ones(`${p}.post_attention_layernorm.weight`, H);
    const gateUp = lin(`${p}.mlp.gate_up_proj`, 2 * I, H);
    const down = lin(`${p}.mlp.down_proj`, H, I);
    layers.set(i, { index: i, inputNorm, postNorm, mixer: { kind: 'attention', qkv, qNorm, kNorm, o }, ffn: { kind: 'dense', gateUp, down } });
  }
  return {
    config: cfg, format: format === 'q4f16_1' ? 'mlc' : 'safetensors', layers,
    embedding: lin('model.embed_tokens', cfg.vocabSize, H), finalNorm: ones('model.norm.weight', H),
  };
}

/** Rows [r0, r1) of a linear as one GGUF tensor (Q4_0 from q4f16_1, BF16 as is). */
function ggufRows(name: string, l: Linear, r0: number, r1: number): GgufTensor {
  const K = l.cols;
  const n = r1 - r0;
  if (l.kind === 'dense') {
    const b = l.weight.bytes;
    return { name, ne: [K, n], type: GGML_TYPE.BF16, data: b.subarray(r0 * K * 2, r1 * K * 2) };
  }
  if (l.kind !== 'q4f16_1') throw new Error(`${name}: the peer bench writes q4f16_1 and BF16 weights only`);
  const words = new Uint32Array(l.qweight.bytes.buffer, l.qweight.bytes.byteOffset, l.qweight.bytes.byteLength / 4);
  const scales = new Uint16Array(l.scales.bytes.buffer, l.scales.bytes.byteOffset, l.scales.bytes.byteLength / 2);
  const blocks = K / 32;
  const out = new Uint8Array(n * blocks * 18);
  const view = new DataView(out.buffer);
  const code = (row: number, k: number): number => (words[row * (K / 8) + (k >>> 3)]! >>> ((k & 7) * 4)) & 0xf;
  for (let r = r0; r < r1; r++) {
    for (let b = 0; b < blocks; b++) {
      const at = ((r - r0) * blocks + b) * 18;
      view.setUint16(at, scales[r * blocks + b]!, true);
      for (let j = 0; j < 16; j++) {
        out[at + 2 + j] = (code(r, b * 32 + j) + 1) | ((code(r, b * 32 + j + 16) + 1) << 4);
      }
    }
  }
  return { name, ne: [K, n], type: GGML_TYPE.Q4_0, data: out };
}

function f32Norm(name: string, t: TensorData): GgufTensor {
  const n = t.shape[0]!;
  return { name, ne: [n], type: GGML_TYPE.F32, data: new Uint8Array(new Float32Array(n).fill(1).buffer) };
}

/** The same weights as a GGUF llama.cpp loads as qwen3 (no tokenizer: 'none' with the vocabulary size). */
export function writePeerGguf(path: string, w: ModelWeights): void {
  const c = w.config;
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = c;
  const tensors: GgufTensor[] = [ggufRows('token_embd.weight', w.embedding!, 0, c.vocabSize), f32Norm('output_norm.weight', w.finalNorm!)];
  for (const [i, l] of w.layers) {
    const { mixer: a, ffn: f } = l;
    if (a.kind !== 'attention' || f.kind !== 'dense') throw new Error(`layer ${i}: the peer bench writes dense Qwen3 layers only`);
    const p = `blk.${i}`;
    tensors.push(
      f32Norm(`${p}.attn_norm.weight`, l.inputNorm),
      ggufRows(`${p}.attn_q.weight`, a.qkv, 0, Hq * D),
      ggufRows(`${p}.attn_k.weight`, a.qkv, Hq * D, (Hq + Hkv) * D),
      ggufRows(`${p}.attn_v.weight`, a.qkv, (Hq + Hkv) * D, (Hq + 2 * Hkv) * D),
      f32Norm(`${p}.attn_q_norm.weight`, a.qNorm),
      f32Norm(`${p}.attn_k_norm.weight`, a.kNorm),
      ggufRows(`${p}.attn_output.weight`, a.o, 0, H),
      f32Norm(`${p}.ffn_norm.weight`, l.postNorm),
      ggufRows(`${p}.ffn_gate.weight`, f.gateUp, 0, I),
      ggufRows(`${p}.ffn_up.weight`, f.gateUp, I, 2 * I),
      ggufRows(`${p}.ffn_down.weight`, f.down, 0, H),
    );
  }
  const q4 = w.embedding!.kind === 'q4f16_1';
  writeGguf(path, {
    'general.architecture': 'qwen3',
    'general.name': 'random Qwen3 shape (pooled peer bench)',
    'general.file_type': { u32: q4 ? 2 : 32 },        // MOSTLY_Q4_0 / MOSTLY_BF16
    'qwen3.vocab_size': { u32: c.vocabSize },
    'qwen3.block_count': { u32: c.numLayers },
    'qwen3.context_length': { u32: c.maxPositionEmbeddings },
    'qwen3.embedding_length': { u32: H },
    'qwen3.feed_forward_length': { u32: I },
    'qwen3.attention.head_count': { u32: Hq },
    'qwen3.attention.head_count_kv': { u32: Hkv },
    'qwen3.attention.key_length': { u32: D },
    'qwen3.attention.value_length': { u32: D },
    'qwen3.rope.freq_base': { f32: c.ropeTheta },
    'qwen3.attention.layer_norm_rms_epsilon': { f32: c.rmsNormEps },
    'tokenizer.ggml.model': 'none',
  }, tensors);
}
