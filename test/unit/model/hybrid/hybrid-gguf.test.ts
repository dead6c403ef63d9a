// Qwen3.5 GGUFs as llama.cpp's converter writes them (docs/hybrid-models.md, "What the converter does"):
// each transform is checked on the bytes of a tiny BF16 GGUF against the HF tensors it came from, then
// the loader's reading (tiled value heads, MTP block skipped), llama-quantize's type choices for the new
// tensors, the qwen35 pre-tokenizer, and named errors for inconsistent files.
import { describe, expect, it } from 'vitest';
import { parseGgufConfig } from '../../../../src/model/formats/gguf/gguf-config.ts';
import { openGgufModel, type GgufModel } from '../../../../src/model/formats/gguf/gguf-read.ts';
import { ggufTokenizerObjects } from '../../../../src/model/formats/gguf/gguf-tokenizer.ts';
import { encodeGguf, type GgufValue } from '../../../../src/model/formats/gguf/gguf-write.ts';
import { hf35 } from '../../../../src/model/formats/qwen35-names.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { keyHeadOf } from '../../../../src/model/reference/gated-delta.ts';
import { bf16BitsToF32, f32ToBf16Bits, toFloat32 } from '../../../../src/model/tensor-utils.ts';
import { ggufTensorType } from '../../../../src/model/tiny/gguf-mix.ts';
import { tinyBpeVocab } from '../../../../src/model/tiny/gguf-vocab.ts';
import { reorderValueHeads } from '../../../../src/model/tiny/tiny-hybrid-gguf.ts';
import { tinyGgufFiles, type TinyGgufOptions } from '../../../../src/model/tiny/tiny-gguf.ts';
import { resolveTinyOptions, tinyWeights } from '../../../../src/model/tiny/tiny-model.ts';
import type { GatedDeltaNetWeights, ModelSource, StoredDType } from '../../../../src/model/types.ts';

const vocab = tinyBpeVocab('{{ messages }}', 40);
const OPTS: TinyGgufOptions = {
  layers: 4, hidden: 64, heads: 4, kvHeads: 2, headDim: 32, intermediate: 96, seed: 3, fileType: 'BF16',
  hybrid: { linearKeyHeads: 2, linearValueHeads: 6, linearHeadDim: 16, convKernel: 4 },
};

function memorySource(files: Map<string, Uint8Array>): ModelSource & { modelFile: string } {
  const [file] = [...files.keys()];
  return {
    label: 'mem', modelFile: file!, async readFile(p) { return files.get(p)!; }, async readRange(p, a, b) { return files.get(p)!.slice(a, b); },
    async exists(p) { return files.has(p); }, async size(p) { return files.get(p)!.length; },
  };
}

/** The model's header and a float tensor's values by name. */
async function tensorsOf(source: ModelSource & { modelFile: string }): Promise<{ model: GgufModel; values: (name: string) => Float32Array }> {
  const model = await openGgufModel(source, source.modelFile);
  const bytes = await source.readFile(source.modelFile);
  const values = (name: string) => {
    const t = model.tensors.get(name);
    if (!t) throw new Error(`no ${name}`);
    return toFloat32({ name, dtype: t.type as StoredDType, shape: [t.ne.reduce((a, b) => a * b, 1)], bytes: bytes.slice(t.start, t.end) });
  };
  return { model, values };
}

const bf16 = (v: Float32Array) => v.map((x) => bf16BitsToF32(f32ToBf16Bits(x)));

describe('the converter transforms, byte for byte', async () => {
  const o = resolveTinyOptions(OPTS);
  const hf = new Map(tinyWeights(o).map((t) => [t.name, t]));
  const N = hf35('model.language_model.');
  const hfv = (name: string) => { const t = hf.get(name)!; return t.dtype === 'F32' ? t.values : bf16(t.values); };
  const { model, values } = await tensorsOf(memorySource(tinyGgufFiles(OPTS, vocab)));
  const nk = 2, nv = 6, d = 16, r = 3, Kd = nk * d, H = 64;

  it('value heads: grouped (k·r + i) moves to tiled (i·n_k + k), which reads key head k: the same rule', () => {
    const v = Float32Array.from({ length: nv }, (_, j) => j);
    expect(Array.from(reorderValueHeads(v, [nv], 0, nk, r, 1))).toEqual([0, 3, 1, 4, 2, 5]);
    const tiled = { numKeyHeads: nk, numValueHeads: nv, keyDim: d, valueDim: d, convKernel: 4, valueHeads: 'tiled' as const };
    const grouped = { ...tiled, valueHeads: 'grouped' as const };
    [0, 3, 1, 4, 2, 5].forEach((g, t) => expect(keyHeadOf(tiled, t)).toBe(keyHeadOf(grouped, g)));
  });

  it('zero-centred norms get + 1 (F32); linear_attn.norm does not', () => {
    expect(values('blk.0.attn_norm.weight')).toEqual(hfv(N.inputNorm(0)).map((w) => 1 + w));
    expect(values('blk.0.post_attention_norm.weight')).toEqual(hfv(N.postNorm(0)).map((w) => 1 + w));
    expect(values('blk.3.attn_q_norm.weight')).toEqual(hfv(N.attn(3, 'q_norm')).map((w) => 1 + w));
    expect(values('output_norm.weight')).toEqual(hfv(N.finalNorm).map((w) => 1 + w));
    expect(values('blk.0.ssm_norm.weight')).toEqual(hfv(N.linear(0, 'norm')));
    expect(model.tensors.get('blk.0.attn_norm.weight')!.typeName).toBe('F32');
  });

  it('ssm_a = −exp(A_log) and ssm_dt.bias = dt_bias, both with value heads tiled', () => {
    expect(values('blk.1.ssm_a')).toEqual(reorderValueHeads(hfv(N.aLog(1)).map((a) => -Math.exp(a)), [nv], 0, nk, r, 1));
    expect(values('blk.1.ssm_dt.bias')).toEqual(reorderValueHeads(hfv(N.dtBias(1)), [nv], 0, nk, r, 1));
  });

  it('conv1d [C, 1, K] squeezed to ne [K, C] (F32), v channels tiled; q, k untouched', () => {
    const t = model.tensors.get('blk.0.ssm_conv1d.weight')!;
    expect([t.ne, t.typeName]).toEqual([[4, 2 * Kd + nv * d], 'F32']);
    const got = values('blk.0.ssm_conv1d.weight'), src = hfv(N.linear(0, 'conv1d'));
    expect(got.subarray(0, 2 * Kd * 4)).toEqual(src.subarray(0, 2 * Kd * 4));
    expect(got.subarray(2 * Kd * 4)).toEqual(reorderValueHeads(src.slice(2 * Kd * 4), [nv * d, 4], 0, nk, r, d));
  });

  it('attn_qkv (v rows tiled), attn_gate, ssm_beta, ssm_alpha (rows tiled), ssm_out (columns tiled)', () => {
    const qkv = values('blk.2.attn_qkv.weight'), src = hfv(N.linear(2, 'in_proj_qkv'));
    expect(qkv.subarray(0, 2 * Kd * H)).toEqual(src.subarray(0, 2 * Kd * H));
    expect(qkv.subarray(2 * Kd * H)).toEqual(reorderValueHeads(src.slice(2 * Kd * H), [nv * d, H], 0, nk, r, d));
    expect(values('blk.2.attn_gate.weight')).toEqual(reorderValueHeads(hfv(N.linear(2, 'in_proj_z')), [nv * d, H], 0, nk, r, d));
    expect(values('blk.2.ssm_beta.weight')).toEqual(reorderValueHeads(hfv(N.linear(2, 'in_proj_b')), [nv, H], 0, nk, r, 1));
    expect(values('blk.2.ssm_alpha.weight')).toEqual(reorderValueHeads(hfv(N.linear(2, 'in_proj_a')), [nv, H], 0, nk, r, 1));
    expect(values('blk.2.ssm_out.weight')).toEqual(reorderValueHeads(hfv(N.linear(2, 'out_proj')), [H, nv * d], 1, nk, r, d));
    expect(model.tensors.get('blk.2.ssm_out.weight')!.ne).toEqual([nv * d, H]);
  });

  it('the MTP block is layer L with nextn tensors, counted in block_count; no vision tensor', () => {
    expect(model.metadata['qwen35.block_count']).toBe(5);
    expect(model.metadata['qwen35.nextn_predict_layers']).toBe(1);
    expect(values('blk.4.attn_norm.weight')).toEqual(hfv('mtp.layers.0.input_layernorm.weight').map((w) => 1 + w));
    expect(values('blk.4.nextn.enorm.weight')).toEqual(hfv('mtp.pre_fc_norm_embedding.weight').map((w) => 1 + w));
    expect(model.tensors.has('blk.4.nextn.eh_proj.weight')).toBe(true);
    expect([...model.tensors.keys()].some((n) => n.includes('visual') || n.includes('patch'))).toBe(false);
    const c = parseGgufConfig(model);
    expect([c.numLayers, c.modelType, c.hybrid!.linearValueHeadDim, c.hybrid!.rotaryDim]).toEqual([4, 'qwen3_5', 16, 8]);
  });
});

describe('reading a hybrid GGUF', () => {
  it('records tiled value heads, and an MoE GGUF splits nothing: experts and the shared expert as stored', async () => {
    const moe: TinyGgufOptions = { ...OPTS, moe: { experts: 4, topK: 2, intermediate: 32 }, hybrid: { ...OPTS.hybrid, sharedExpertIntermediate: 48 } };
    const w = await loadWeights(memorySource(tinyGgufFiles(moe, vocab)), { layers: [0, 4] });
    const l0 = w.layers.get(0)!;
    if (l0.mixer.kind !== 'gated_delta_net' || l0.ffn.kind !== 'moe' || !l0.ffn.shared) throw new Error('layer 0 is not a Gated DeltaNet MoE layer');
    expect((l0.mixer as GatedDeltaNetWeights).valueHeads).toBe('tiled');
    expect([l0.ffn.moe.gate.rows, l0.ffn.shared.gateUp.rows, l0.ffn.shared.gate.rows, l0.ffn.shared.gate.cols]).toEqual([4 * 32, 2 * 48, 1, 64]);
    expect(w.config.moe).toMatchObject({ numExperts: 4, sharedExpertIntermediateSize: 48, normTopkProb: true });
  });

  it('names inconsistent files: interval vs tensors, nextn past block_count, a wrong ssm shape', async () => {
    const files = tinyGgufFiles(OPTS, vocab);
    const src = memorySource(files);
    const model = await openGgufModel(src, src.modelFile);
    const patched = (meta: Record<string, GgufValue>) => {
      const md = Object.entries(model.metadata).map(([k, v]) => [k, meta[k] ?? guess(v)] as [string, GgufValue]);
      for (const [k, v] of Object.entries(meta)) if (!(k in model.metadata)) md.push([k, v]);
      return md;
    };
    const reencode = async (meta: Record<string, GgufValue>) => {
      const bytes = await src.readFile(src.modelFile);
      const tensors = [...model.tensors.values()].map((t) => ({ name: t.name, type: t.type!, ne: t.ne, bytes: bytes.slice(t.start, t.end) }));
      return openGgufModel(memorySource(new Map([['m.gguf', encodeGguf(patched(meta), tensors)]])), 'm.gguf');
    };
    expect(() => parseGgufConfig(model)).not.toThrow();
    await expect(reencode({ 'qwen35.full_attention_interval': { kind: 'u32', value: 2 } }).then(parseGgufConfig)).rejects.toThrow(/layer 1 is linear_attention but "qwen35.full_attention_interval" 2 says otherwise/);
    await expect(reencode({ 'qwen35.nextn_predict_layers': { kind: 'u32', value: 5 } }).then(parseGgufConfig)).rejects.toThrow(/"qwen35.nextn_predict_layers" 5 must be a whole number below block_count 5/);
    const narrower = await reencode({ 'qwen35.ssm.inner_size': { kind: 'u32', value: 6 * 8 } });
    expect(parseGgufConfig(narrower).hybrid!.linearValueHeadDim).toBe(8);
    const bytes = await src.readFile(src.modelFile);
    const tensors = [...model.tensors.values()].map((t) => ({ name: t.name, type: t.type!, ne: t.ne, bytes: bytes.slice(t.start, t.end) }));
    const bad = memorySource(new Map([['m.gguf', encodeGguf(patched({ 'qwen35.ssm.inner_size': { kind: 'u32', value: 6 * 8 } }), tensors)]]));
    await expect(loadWeights(bad, { layers: [0, 1] })).rejects.toThrow(/blk\.0\.attn_qkv\.weight.*ne \[64, 160\] but the GGUF metadata implies \[64, 112\]/);
  });
});

/** A metadata value back in writable form (the tests only re-encode what the tiny writer wrote). */
function guess(v: unknown): GgufValue {
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (typeof v === 'boolean') return { kind: 'bool', value: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { kind: 'u32', value: v } : { kind: 'f32', value: v };
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) return { kind: 'array', of: 'string', values: v as string[] };
    return { kind: 'array', of: 'i32', values: v as number[] };
  }
  throw new Error(`unexpected metadata ${JSON.stringify(v)}`);
}

describe('llama-quantize on the hybrid tensors (Q4_K_M)', () => {
  const ctx = { fileType: 'Q4_K_M' as const, numLayers: 41, numExperts: 256, tiedEmbeddings: false };
  it.each([
    ['blk.0.ssm_conv1d.weight', [4, 8192], 'F32', 'F32'],            // never quantized
    ['blk.0.ffn_gate_inp_shexp.weight', [2048, 1], 'F32', 'F32'],   // ggml_n_dims 1
    ['blk.0.ssm_a', [32], 'F32', 'F32'],
    ['blk.0.ssm_out.weight', [4096, 2048], 'BF16', 'Q4_K'],
    ['blk.0.attn_qkv.weight', [2048, 8192], 'BF16', 'Q6_K'],        // attention-v-like, use_more_bits layer 0 of 41
    ['blk.9.attn_qkv.weight', [2048, 8192], 'BF16', 'Q4_K'],       // (9 − 41/8) mod 3 = 1: not more bits
    ['blk.0.ffn_down_shexp.weight', [512, 2048], 'BF16', 'Q6_K'],   // ffn_down category, use_more_bits
    ['blk.0.ssm_beta.weight', [2048, 32], 'BF16', 'Q4_K'],
  ])('%s', (name, ne, base, want) => {
    expect(ggufTensorType(name, ne, base as 'BF16', ctx)).toBe(want);
  });
  it('8-expert models get Q8_0 attn_qkv like attn_v', () => {
    expect(ggufTensorType('blk.10.attn_qkv.weight', [2048, 8192], 'BF16', { ...ctx, numExperts: 8 })).toBe('Q8_0');
  });
});

it('the qwen35 pre-tokenizer keeps combining marks with their letters (qwen2 splits them off)', () => {
  const split = (pre: string, text: string) => {
    const objs = ggufTokenizerObjects({ 'tokenizer.ggml.model': 'gpt2', 'tokenizer.ggml.pre': pre, 'tokenizer.ggml.tokens': ['a'], 'tokenizer.ggml.merges': [] }, 't.gguf');
    const seq = (objs.tokenizerJson.pre_tokenizer as { pretokenizers: { pattern?: { Regex: string } }[] }).pretokenizers;
    const re = new RegExp(seq.find((p) => p.pattern)!.pattern!.Regex.replace('(?i:', '(?:'), 'gu');
    return text.match(re);
  };
  expect(split('qwen35', 'कि नमस्ते')).toEqual(['कि', ' नमस्ते']);
  expect(split('qwen2', 'कि नमस्ते')).toEqual(['क', 'ि', ' नमस', '्त', 'े']);
});
