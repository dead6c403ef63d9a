// Tiny Qwen3 / Qwen3 MoE checkpoints as GGUF, laid out as llama.cpp's convert_hf_to_gguf.py +
// llama-quantize would write them: the same seeded weights as the safetensors tiny model (rounded to
// BF16 first, as the HF checkpoint holds them), renamed and stacked (experts), each tensor in the type
// llama-quantize picks for the file type (./gguf-mix.ts) and quantized with ggml's reference quantizers;
// the tokenizer and chat template in the metadata. Same options and seed → same bytes.

import { quantizeGgml } from '../formats/gguf/ggml-quantize.ts';
import { splitPartName } from '../formats/gguf/gguf-read.ts';
import { GGUF_NAMES as N } from '../formats/gguf/gguf-names.ts';
import { encodeGguf, type GgufTensorToWrite, type GgufValue } from '../formats/gguf/gguf-write.ts';
import { HF } from '../formats/qwen3-names.ts';
import { bf16BitsToF32, f32ToBf16Bits } from '../tensor-utils.ts';
import type { GgmlType } from '../types.ts';
import { ggufTensorType, LLAMA_FTYPE, quantizeOrder, type GgufFileType } from './gguf-mix.ts';
import { hybridGgufMetadata, hybridGgufTensors } from './tiny-hybrid-gguf.ts';
import { resolveTinyOptions, tinyWeights, type ResolvedTinyOptions, type TinyModelOptions } from './tiny-model.ts';

/** A vocabulary in GGUF form (tokenizer.ggml.*) plus the chat template. */
export interface GgufVocab {
  tokens: string[];
  tokenTypes: number[];        // 1 normal, 3 control, 4 user-defined, 5 unused
  merges: string[];            // "a b" in rank order
  pre: string;                 // tokenizer.ggml.pre
  bos?: number;
  eos: number;
  pad?: number;
  chatTemplate: string;
}

export interface TinyGgufOptions extends TinyModelOptions {
  fileType?: GgufFileType;     // default Q8_0
  splits?: number;             // N > 1: "<name>-0000k-of-0000N.gguf" parts, tensors split in order
  name?: string;               // file name stem (default "tiny-qwen3[-moe]-<fileType>")
}

const bf16 = (v: Float32Array): Float32Array => v.map((x) => bf16BitsToF32(f32ToBf16Bits(x)));

/** GGUF name, ne, base type and values of every tensor, from the HF-named tiny weights. */
function ggufTensors(o: ResolvedTinyOptions): { name: string; ne: number[]; base: GgmlType; values: Float32Array }[] {
  const hf = new Map(tinyWeights(o).map((t) => [t.name, t]));
  const out: { name: string; ne: number[]; base: GgmlType; values: Float32Array }[] = [];
  const take = (gguf: string, name: string) => {
    const t = hf.get(name)!;
    out.push({ name: gguf, ne: [...t.shape].reverse(), base: t.shape.length === 1 ? 'F32' : 'BF16', values: bf16(t.values) });
  };
  const experts = (gguf: string, i: number, p: 'gate' | 'up' | 'down') => {
    const m = o.moe!;
    const parts = Array.from({ length: m.experts }, (_, e) => hf.get(HF.expert(i, e, p))!);
    const values = new Float32Array(parts.reduce((a, t) => a + t.values.length, 0));
    parts.forEach((t, e) => values.set(bf16(t.values), e * t.values.length));
    out.push({ name: gguf, ne: [parts[0]!.shape[1]!, parts[0]!.shape[0]!, m.experts], base: 'BF16', values });
  };
  take(N.embedding, HF.embedding);
  take(N.finalNorm, HF.finalNorm);
  if (!o.tieWordEmbeddings) take(N.lmHead, HF.lmHead);
  for (let i = 0; i < o.layers; i++) {
    take(N.attnNorm(i), HF.inputNorm(i));
    take(N.q(i), HF.proj(i, 'q'));
    take(N.k(i), HF.proj(i, 'k'));
    take(N.v(i), HF.proj(i, 'v'));
    take(N.o(i), HF.proj(i, 'o'));
    take(N.qNorm(i), HF.qNorm(i));
    take(N.kNorm(i), HF.kNorm(i));
    take(N.ffnNorm(i), HF.postNorm(i));
    if (hf.has(HF.router(i))) {
      const r = hf.get(HF.router(i))!;
      out.push({ name: N.router(i), ne: [r.shape[1]!, r.shape[0]!], base: 'F32', values: bf16(r.values) });
      experts(N.gateExps(i), i, 'gate');
      experts(N.upExps(i), i, 'up');
      experts(N.downExps(i), i, 'down');
    } else {
      take(N.gate(i), HF.mlp(i, 'gate'));
      take(N.up(i), HF.mlp(i, 'up'));
      take(N.down(i), HF.mlp(i, 'down'));
    }
  }
  return out;
}

export function ggufMetadata(o: ResolvedTinyOptions, fileType: GgufFileType, vocab: GgufVocab, name: string): [string, GgufValue][] {
  const arch = o.hybrid ? (o.moe ? 'qwen35moe' : 'qwen35') : o.moe ? 'qwen3moe' : 'qwen3';
  const u32 = (value: number): GgufValue => ({ kind: 'u32', value });
  const f32 = (value: number): GgufValue => ({ kind: 'f32', value });
  const str = (value: string): GgufValue => ({ kind: 'string', value });
  const head: [string, GgufValue][] = [['general.architecture', str(arch)], ['general.type', str('model')], ['general.name', str(name)]];
  const md: [string, GgufValue][] = arch === 'qwen35' || arch === 'qwen35moe' ? [...head, ...hybridGgufMetadata(o, arch)] : [
    ...head,
    [`${arch}.block_count`, u32(o.layers)],
    [`${arch}.context_length`, u32(40960)],
    [`${arch}.embedding_length`, u32(o.hidden)],
    [`${arch}.feed_forward_length`, u32(o.intermediate)],
    [`${arch}.attention.head_count`, u32(o.heads)],
    [`${arch}.attention.head_count_kv`, u32(o.kvHeads)],
    [`${arch}.rope.freq_base`, f32(1000000)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(1e-6)],
    [`${arch}.attention.key_length`, u32(o.headDim)],
    [`${arch}.attention.value_length`, u32(o.headDim)],
  ];
  if (o.moe && !o.hybrid) {
    md.push([`${arch}.expert_used_count`, u32(o.moe.topK)], [`${arch}.expert_count`, u32(o.moe.experts)],
      [`${arch}.expert_feed_forward_length`, u32(o.moe.intermediate)]);
    if (!o.moe.normTopkProb) md.push([`${arch}.expert_weights_norm`, { kind: 'bool', value: false }]);
  }
  md.push(
    ['general.file_type', u32(LLAMA_FTYPE[fileType])],
    ['general.quantization_version', u32(2)],
    ['tokenizer.ggml.model', str('gpt2')],
    ['tokenizer.ggml.pre', str(vocab.pre)],
    ['tokenizer.ggml.tokens', { kind: 'array', of: 'string', values: vocab.tokens }],
    ['tokenizer.ggml.token_type', { kind: 'array', of: 'i32', values: vocab.tokenTypes }],
    ['tokenizer.ggml.merges', { kind: 'array', of: 'string', values: vocab.merges }],
    ['tokenizer.ggml.eos_token_id', u32(vocab.eos)],
  );
  if (vocab.pad !== undefined) md.push(['tokenizer.ggml.padding_token_id', u32(vocab.pad)]);
  if (vocab.bos !== undefined) md.push(['tokenizer.ggml.bos_token_id', u32(vocab.bos)]);
  md.push(['tokenizer.ggml.add_bos_token', { kind: 'bool', value: false }], ['tokenizer.chat_template', str(vocab.chatTemplate)]);
  return md;
}

/** Every file of a tiny GGUF model (one file, or `splits` parts): path → bytes. */
export function tinyGgufFiles(opts: TinyGgufOptions, vocab: GgufVocab): Map<string, Uint8Array> {
  const o = resolveTinyOptions({ ...opts, vocab: opts.vocab ?? vocab.tokens.length });
  if (o.vocab !== vocab.tokens.length) throw new RangeError(`tiny GGUF: vocab ${o.vocab} rows but the vocabulary has ${vocab.tokens.length} tokens`);
  const fileType = opts.fileType ?? 'Q8_0';
  const stem = opts.name ?? `tiny-qwen3${o.hybrid ? '5' : ''}${o.moe ? '-moe' : ''}-${fileType}`;
  // llama-quantize counts every block, the MTP one included (n_layer_all), for use_more_bits.
  const ctx = { fileType, numLayers: o.layers + (o.hybrid?.extras ? 1 : 0), numExperts: o.moe?.experts ?? 0, tiedEmbeddings: o.tieWordEmbeddings };
  const tensors: GgufTensorToWrite[] = (o.hybrid ? hybridGgufTensors(o) : ggufTensors(o))
    .sort((a, b) => quantizeOrder(a.name, b.name))
    .map((t) => {
      const type = ggufTensorType(t.name, t.ne, t.base, ctx);
      const rows = t.values.length / t.ne[0]!;
      return { name: t.name, type, ne: t.ne, bytes: quantizeGguf(type, t.values, rows, t.ne[0]!) };
    });
  const md = ggufMetadata(o, fileType, vocab, stem);
  const splits = Math.max(1, Math.min(opts.splits ?? 1, tensors.length));
  if (splits === 1) return new Map([[`${stem}.gguf`, encodeGguf(md, tensors)]]);
  const files = new Map<string, Uint8Array>();
  for (let k = 0; k < splits; k++) {
    const part = tensors.slice(Math.floor((k * tensors.length) / splits), Math.floor(((k + 1) * tensors.length) / splits));
    const splitKeys: [string, GgufValue][] = [
      ['split.no', { kind: 'u16', value: k }], ['split.count', { kind: 'u16', value: splits }],
      ['split.tensors.count', { kind: 'i32', value: tensors.length }],
    ];
    files.set(splitPartName(stem, k + 1, splits), encodeGguf(k === 0 ? [...md, ...splitKeys] : splitKeys, part));
  }
  return files;
}

function quantizeGguf(type: GgmlType, values: Float32Array, rows: number, cols: number): Uint8Array {
  return quantizeGgml(type, values, rows, cols);
}
