// The CPU bench's random Qwen3-0.6B-shape weights (./models.ts: Q8_0, Q4_0 or Q4_K blocks) written as a
// GGUF llama.cpp loads, so the peers (wllama, native llama.cpp) run exactly the weights ours runs: the
// block bytes are copied as they are, the fused q|k|v and gate|up rows split into llama.cpp's tensors.
// A SentencePiece-style vocabulary of placeholder pieces is included (byte pieces <0x00>..<0xFF> and
// "▁t<id>"), because llama.cpp's server path (wllama) turns generated ids into text and takes its prompt as
// text (each character one byte-fallback token: harness/cpu-bench.ts); native llama.cpp takes the prompt as ids.
import { GGML_TYPES } from '../../src/model/formats/gguf/ggml-types.ts';
import type { Linear, ModelWeights } from '../../src/model/types.ts';
import { GGML_TYPE, writeGguf, type GgufTensor } from '../peers/gguf-writer.ts';

const TYPE_CODE = { Q8_0: GGML_TYPE.Q8_0, Q4_0: GGML_TYPE.Q4_0, Q4_K: GGML_TYPE.Q4_K } as const;
const FILE_TYPE = { Q8_0: 7, Q4_0: 2, Q4_K: 15 } as const;   // MOSTLY_Q8_0, MOSTLY_Q4_0, MOSTLY_Q4_K_M

function rowsOf(name: string, l: Linear, r0: number, r1: number): GgufTensor {
  if (l.kind !== 'ggml' || l.segments.length !== 1) throw new Error(`${name}: the CPU peer bench writes single-run GGML linears only`);
  const seg = l.segments[0]!;
  const t = seg.type as keyof typeof TYPE_CODE;
  if (!(t in TYPE_CODE)) throw new Error(`${name}: ${seg.type} is not one of the CPU bench's types`);
  const { blockSize, blockBytes } = GGML_TYPES[t];
  const rb = (l.cols / blockSize) * blockBytes;
  return { name, ne: [l.cols, r1 - r0], type: TYPE_CODE[t], data: seg.bytes.subarray(r0 * rb, r1 * rb) };
}

const f32Ones = (name: string, n: number): GgufTensor => ({ name, ne: [n], type: GGML_TYPE.F32, data: new Uint8Array(new Float32Array(n).fill(1).buffer) });

/** Writes `w` (from randomCpuModel) to `file`; returns the type written. */
export function writeCpuPeerGguf(file: string, w: ModelWeights): string {
  const c = w.config;
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I } = c;
  const emb = w.embedding!;
  if (emb.kind !== 'ggml') throw new Error('writeCpuPeerGguf: the embedding is not GGML blocks');
  const type = emb.segments[0]!.type as keyof typeof FILE_TYPE;
  const tensors: GgufTensor[] = [rowsOf('token_embd.weight', emb, 0, c.vocabSize), f32Ones('output_norm.weight', H)];
  for (const [i, l] of w.layers) {
    const { mixer: a, ffn: f } = l;
    if (a.kind !== 'attention' || f.kind !== 'dense') throw new Error(`layer ${i}: dense Qwen3 layers only`);
    const p = `blk.${i}`;
    tensors.push(
      f32Ones(`${p}.attn_norm.weight`, H),
      rowsOf(`${p}.attn_q.weight`, a.qkv, 0, Hq * D),
      rowsOf(`${p}.attn_k.weight`, a.qkv, Hq * D, (Hq + Hkv) * D),
      rowsOf(`${p}.attn_v.weight`, a.qkv, (Hq + Hkv) * D, (Hq + 2 * Hkv) * D),
      f32Ones(`${p}.attn_q_norm.weight`, D),
      f32Ones(`${p}.attn_k_norm.weight`, D),
      rowsOf(`${p}.attn_output.weight`, a.o, 0, H),
      f32Ones(`${p}.ffn_norm.weight`, H),
      rowsOf(`${p}.ffn_gate.weight`, f.gateUp, 0, I),
      rowsOf(`${p}.ffn_up.weight`, f.gateUp, I, 2 * I),
      rowsOf(`${p}.ffn_down.weight`, f.down, 0, H),
    );
  }
  const pieces = Array.from({ length: c.vocabSize }, (_, id) =>
    id === 0 ? '<unk>' : id === 1 ? '<s>' : id === 2 ? '</s>' : id < 259 ? `<0x${(id - 3).toString(16).toUpperCase().padStart(2, '0')}>` : `▁t${id}`);
  writeGguf(file, {
    'general.architecture': 'qwen3',
    'general.name': `random Qwen3-0.6B shape, ${c.numLayers} layers (pooled CPU peer bench)`,
    'general.file_type': { u32: FILE_TYPE[type] },
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
    'tokenizer.ggml.model': 'llama',
    'tokenizer.ggml.tokens': pieces,
  }, tensors);
  return type;
}
