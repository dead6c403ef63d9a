// Random weights of the Qwen3-0.6B shape as GGUF blocks (Q8_0, Q4_0, Q4_K), made directly as block
// bytes (random codes, a small f16 scale per block) rather than by quantizing f32 values, so a 0.6B-shape
// model is built in a second. Every layer has the same shape as the real model; only `layers` is cut.
import { f32ToF16Bits } from '../../src/model/tensor-utils.ts';
import type { DecoderLayerWeights, GgmlType, Linear, ModelConfig, ModelWeights, TensorData } from '../../src/model/types.ts';
import { GGML_TYPES } from '../../src/model/formats/gguf/ggml-types.ts';
import { QWEN3_0_6B } from '../peers/models.ts';

export type CpuBenchType = Extract<GgmlType, 'Q8_0' | 'Q4_0' | 'Q4_K'>;

let state = 0x9e3779b9;
function fill(bytes: Uint8Array): void {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  for (let i = 0; i < words.length; i++) {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
    words[i] = state >>> 0;
  }
}

/** Where each block's f16 scale(s) sit, so they can be set small (random bits would be huge or NaN). */
const SCALE_AT: Record<CpuBenchType, number[]> = { Q8_0: [0], Q4_0: [0], Q4_K: [0, 2] };

function randomGgml(name: string, type: CpuBenchType, rows: number, cols: number): Linear {
  const { blockSize, blockBytes } = GGML_TYPES[type];
  const blocks = (rows * cols) / blockSize;
  const bytes = new Uint8Array(Math.ceil((blocks * blockBytes) / 4) * 4).subarray(0, blocks * blockBytes);
  fill(new Uint8Array(bytes.buffer));
  const small = f32ToF16Bits(type === 'Q8_0' ? 2e-4 : 2e-3);
  for (let b = 0; b < blocks; b++) {
    for (const at of SCALE_AT[type]) { bytes[b * blockBytes + at] = small & 0xff; bytes[b * blockBytes + at + 1] = small >> 8; }
  }
  return { kind: 'ggml', rows, cols, segments: [{ name, type, rows, bytes }] };
}

function ones(name: string, n: number): TensorData {
  const h = new Uint16Array(n).fill(f32ToF16Bits(1));
  return { name, dtype: 'F16', shape: [n], bytes: new Uint8Array(h.buffer) };
}

/** The 0.6B shape with `layers` layers and the tied embedding/head, every linear of `type`. */
export function randomCpuModel(type: CpuBenchType, layers: number): ModelWeights {
  const cfg: ModelConfig = { ...QWEN3_0_6B, numLayers: layers };
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = cfg;
  const out = new Map<number, DecoderLayerWeights>();
  for (let i = 0; i < layers; i++) {
    out.set(i, {
      index: i, inputNorm: ones(`blk.${i}.attn_norm`, H), postNorm: ones(`blk.${i}.ffn_norm`, H),
      mixer: { kind: 'attention', qkv: randomGgml(`blk.${i}.attn_qkv`, type, (Hq + 2 * Hkv) * D, H), qNorm: ones('q_norm', D), kNorm: ones('k_norm', D), o: randomGgml(`blk.${i}.attn_output`, type, H, Hq * D) },
      ffn: { kind: 'dense', gateUp: randomGgml(`blk.${i}.ffn_gate_up`, type, 2 * I, H), down: randomGgml(`blk.${i}.ffn_down`, type, H, I) },
    });
  }
  return { config: cfg, format: 'gguf', layers: out, embedding: randomGgml('token_embd', type, cfg.vocabSize, H), finalNorm: ones('output_norm', H) };
}
