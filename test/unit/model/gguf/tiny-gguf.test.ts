// Tiny GGUF writing: llama-quantize's type mix (Q4_K_M: K-quants where rows allow, Q6_K/Q8_0 for the
// output, attn_v and ffn_down of the use_more_bits layers, the 8-expert rules, fallbacks for rows that
// are not a multiple of 256, F32 norms and router), llama-quantize's tensor order, and same options →
// same bytes. The expectations below are read off llama.cpp's src/llama-quant.cpp by hand.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openGgufModel } from '../../../../src/model/formats/gguf/gguf-read.ts';
import { useMoreBits } from '../../../../src/model/tiny/gguf-mix.ts';
import { tinyBpeVocab } from '../../../../src/model/tiny/gguf-vocab.ts';
import { tinyGgufFiles, type TinyGgufOptions } from '../../../../src/model/tiny/tiny-gguf.ts';
import type { ModelSource } from '../../../../src/model/types.ts';

const vocab = tinyBpeVocab('{{ messages }}', 40);

async function typesOf(opts: TinyGgufOptions): Promise<{ types: Record<string, string>; order: string[] }> {
  const [[file, bytes]] = [...tinyGgufFiles(opts, vocab)];
  const src: ModelSource = {
    label: 'mem', async readFile() { return bytes; }, async readRange(_p, a, b) { return bytes.slice(a, b); },
    async exists(p) { return p === file; }, async size() { return bytes.length; },
  };
  const m = await openGgufModel(src, file);
  return { types: Object.fromEntries([...m.tensors.values()].map((t) => [t.name, t.typeName])), order: [...m.tensors.keys()] };
}

describe('the Q4_K_M mix', () => {
  it('use_more_bits picks the first and last eighth and every third layer between', () => {
    expect(Array.from({ length: 4 }, (_, i) => useMoreBits(i, 4))).toEqual([false, false, true, true]);
    expect(Array.from({ length: 16 }, (_, i) => useMoreBits(i, 16)).map(Number).join('')).toBe('1100100100100111');
  });

  it('dense, rows of 64 and 256: K-quants where K allows, fallbacks elsewhere', async () => {
    const { types, order } = await typesOf({ layers: 4, hidden: 64, heads: 4, kvHeads: 2, headDim: 64, intermediate: 256, fileType: 'Q4_K_M' });
    expect(types['token_embd.weight']).toBe('Q8_0');         // tied: quantized as the output, 64 % 256 → Q8_0
    expect(types['output_norm.weight']).toBe('F32');
    for (const i of [0, 1, 2, 3]) {
      expect(types[`blk.${i}.attn_q.weight`]).toBe('Q5_0');  // Q4_K, 64 % 256 → Q5_0
      expect(types[`blk.${i}.attn_output.weight`]).toBe('Q4_K');
      expect(types[`blk.${i}.ffn_gate.weight`]).toBe('Q5_0');
      expect(types[`blk.${i}.attn_norm.weight`]).toBe('F32');
      expect(types[`blk.${i}.attn_v.weight`]).toBe(i >= 2 ? 'Q8_0' : 'Q5_0');   // Q6_K → Q8_0 where use_more_bits
      expect(types[`blk.${i}.ffn_down.weight`]).toBe(i >= 2 ? 'Q6_K' : 'Q4_K');
    }
    expect(order.slice(0, 3)).toEqual(['output_norm.weight', 'token_embd.weight', 'blk.0.attn_k.weight']);
    expect(order.slice(3, 6)).toEqual(['blk.0.attn_k_norm.weight', 'blk.0.attn_norm.weight', 'blk.0.attn_output.weight']);
  });

  it('rows of 256: Q4_K and a Q6_K token_embd; an untied output gets Q6_K and the embedding Q4_K', async () => {
    const tied = await typesOf({ layers: 2, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 256, fileType: 'Q4_K_M' });
    expect([tied.types['token_embd.weight'], tied.types['blk.0.attn_q.weight'], tied.types['blk.1.attn_v.weight']]).toEqual(['Q6_K', 'Q4_K', 'Q6_K']);
    const untied = await typesOf({ layers: 2, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 256, fileType: 'Q4_K_M', tieWordEmbeddings: false });
    expect([untied.types['token_embd.weight'], untied.types['output.weight']]).toEqual(['Q4_K', 'Q6_K']);
  });

  it('an 8-expert MoE: Q8_0 attn_k/attn_v, Q5_K attn_output, stacked experts, F32 router', async () => {
    const { types } = await typesOf({ layers: 4, hidden: 64, heads: 4, kvHeads: 2, headDim: 64, intermediate: 256, fileType: 'Q4_K_M', moe: { experts: 8, topK: 2 } });
    for (const i of [0, 3]) {
      expect([types[`blk.${i}.attn_k.weight`], types[`blk.${i}.attn_v.weight`], types[`blk.${i}.attn_output.weight`]]).toEqual(['Q8_0', 'Q8_0', 'Q5_K']);
      expect(types[`blk.${i}.ffn_gate_inp.weight`]).toBe('F32');
      expect(types[`blk.${i}.ffn_gate_exps.weight`]).toBe('Q5_0');
      expect(types[`blk.${i}.ffn_down_exps.weight`]).toBe(i >= 2 ? 'Q6_K' : 'Q4_K');
      expect(types[`blk.${i}.ffn_gate.weight`]).toBeUndefined();
    }
  });

  it.each(['Q8_0', 'Q4_0', 'Q5_1'] as const)('%s: one type for every matrix, Q6_K→Q8_0 output rule', async (fileType) => {
    const { types } = await typesOf({ layers: 2, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 64, fileType });
    expect(types['blk.1.ffn_up.weight']).toBe(fileType);
    expect(types['token_embd.weight']).toBe('Q8_0');   // the output rule: Q6_K, or Q8_0 when the rows (64) are not a multiple of 256
  });
});

describe('determinism', () => {
  it('the same options and seed give the same bytes; another seed does not', () => {
    const sha = (o: TinyGgufOptions) => [...tinyGgufFiles(o, vocab).values()].map((b) => createHash('sha256').update(b).digest('hex'));
    const o: TinyGgufOptions = { layers: 2, hidden: 64, headDim: 64, intermediate: 256, fileType: 'Q4_K_M', seed: 4 };
    expect(sha(o)).toEqual(sha(o));
    expect(sha({ ...o, seed: 5 })).not.toEqual(sha(o));
  });
});
