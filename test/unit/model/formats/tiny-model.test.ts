// Tiny checkpoints: seeded (same seed → same bytes), real repository layouts, sane scales, and the CLI.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHfConfig, parseMlcChatConfig } from '../../../../src/model/config.ts';
import {
  resolveTinyOptions, tinyMlcFiles, tinySafetensorsFiles, tinyWeights, type TokenizerFiles,
} from '../../../../src/model/tiny/tiny-model.ts';
import { qwen3TokenizerFiles } from '../../../../src/model/tiny/write-node.ts';

let tokenizer: TokenizerFiles;
let tmp: string;
beforeAll(async () => {
  tokenizer = await qwen3TokenizerFiles();
  tmp = await mkdtemp(join(tmpdir(), 'pooled-tiny-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

const digest = (files: Map<string, Uint8Array>) =>
  Object.fromEntries([...files].map(([k, v]) => [k, createHash('sha256').update(v).digest('hex')]));

describe('tiny checkpoints', () => {
  it('the same seed gives the same bytes; another seed other weights', () => {
    const opts = { layers: 2, vocab: 512, seed: 11, shards: 2 };
    expect(digest(tinySafetensorsFiles(opts, tokenizer))).toEqual(digest(tinySafetensorsFiles(opts, tokenizer)));
    expect(digest(tinyMlcFiles(opts, tokenizer))).toEqual(digest(tinyMlcFiles(opts, tokenizer)));
    const other = digest(tinySafetensorsFiles({ ...opts, seed: 12 }, tokenizer));
    const same = digest(tinySafetensorsFiles(opts, tokenizer));
    expect(other['config.json']).toBe(same['config.json']);
    expect(other['model-00001-of-00002.safetensors']).not.toBe(same['model-00001-of-00002.safetensors']);
  });

  it('a layer\'s weights do not depend on how many layers the model has', () => {
    const two = new Map(tinyWeights(resolveTinyOptions({ layers: 2, vocab: 64 })).map((t) => [t.name, t.values]));
    const four = new Map(tinyWeights(resolveTinyOptions({ layers: 4, vocab: 64 })).map((t) => [t.name, t.values]));
    expect(Array.from(four.get('model.layers.1.mlp.down_proj.weight')!)).toEqual(Array.from(two.get('model.layers.1.mlp.down_proj.weight')!));
  });

  it('has the files of real repositories, with the real Qwen3 tokenizer', () => {
    const st = tinySafetensorsFiles({ layers: 1, vocab: 128 }, tokenizer);
    expect([...st.keys()].sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
    const sharded = tinySafetensorsFiles({ layers: 2, vocab: 128, shards: 3 }, tokenizer);
    expect([...sharded.keys()].filter((k) => k.includes('safetensors')).sort()).toEqual([
      'model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors', 'model.safetensors.index.json',
    ]);
    const mlc = tinyMlcFiles({ layers: 2, vocab: 128, shards: 2 }, tokenizer);
    expect([...mlc.keys()].sort()).toEqual([
      'mlc-chat-config.json', 'params_shard_0.bin', 'params_shard_1.bin', 'tensor-cache.json', 'tokenizer.json', 'tokenizer_config.json',
    ]);
    expect(st.get('tokenizer.json')!.byteLength).toBe(11422654);
    const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));
    const fromHf = parseHfConfig(json(st.get('config.json')!));
    const fromMlc = parseMlcChatConfig(json(mlc.get('mlc-chat-config.json')!));
    expect({ ...fromMlc, numLayers: 1, eosTokenIds: [] }).toEqual({ ...fromHf, eosTokenIds: [] });
    expect(fromHf).toMatchObject({ hiddenSize: 64, numHeads: 4, numKvHeads: 2, headDim: 16, intermediateSize: 128, vocabSize: 128 });
    const cache = json(mlc.get('tensor-cache.json')!);
    expect(cache.records[0].records[0]).toMatchObject({ name: 'model.embed_tokens.q_weight', dtype: 'uint32', shape: [128, 8] });
    const names = cache.records.flatMap((r: { records: { name: string }[] }) => r.records.map((x) => x.name));
    expect(names).toContain('model.layers.1.self_attn.c_attn.q_scale');
    expect(names).toContain('model.layers.1.mlp.gate_up_proj.q_weight');
    expect(names.some((n: string) => n.includes('q_proj'))).toBe(false);
  });

  it('draws the embedding at std 0.05 and o_proj / down_proj 4× larger than 1/√fan_in', () => {
    const w = new Map(tinyWeights(resolveTinyOptions({ layers: 1, vocab: 4096 })).map((t) => [t.name, t.values]));
    const std = (v: Float32Array) => Math.sqrt(v.reduce((a, x) => a + x * x, 0) / v.length);
    expect(std(w.get('model.embed_tokens.weight')!)).toBeCloseTo(0.05, 2);
    expect(std(w.get('model.layers.0.self_attn.q_proj.weight')!)).toBeCloseTo(1 / 8, 1);
    expect(std(w.get('model.layers.0.self_attn.o_proj.weight')!)).toBeCloseTo(4 / 8, 1);
    expect(std(w.get('model.layers.0.mlp.down_proj.weight')!)).toBeCloseTo(4 / Math.sqrt(128), 1);
  });

  it('refuses shapes q4f16_1 cannot hold', () => {
    expect(() => tinyMlcFiles({ hidden: 48 }, tokenizer)).toThrow(/q4f16_1 needs hidden to be a multiple of 32, got 48/);
    expect(() => resolveTinyOptions({ heads: 4, kvHeads: 3 })).toThrow(/heads 4 must be a multiple of kv-heads 3/);
  });
});

describe('make-tiny-model CLI', () => {
  const run = promisify(execFile);
  const cli = ['--import', 'tsx', 'bin/make-tiny-model.ts'];

  it('writes both formats with the requested shape, byte-identical to the library', async () => {
    const out = join(tmp, 'both');
    const { stdout } = await run(process.execPath, [...cli, '--out', out, '--format', 'both', '--layers', '2', '--vocab', '256',
      '--seed', '5', '--shards', '2', '--hidden', '64', '--heads', '4', '--kv-heads', '2', '--head-dim', '16', '--intermediate', '128']);
    expect(stdout).toMatch(/\/safetensors: config\.json, generation_config\.json/);
    expect((await readdir(out)).sort()).toEqual(['mlc', 'safetensors']);
    const lib = tinySafetensorsFiles({ layers: 2, vocab: 256, seed: 5, shards: 2 }, tokenizer);
    for (const [name, bytes] of lib) {
      expect(createHash('sha256').update(await readFile(join(out, 'safetensors', name))).digest('hex'))
        .toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    expect((await readdir(join(out, 'mlc'))).filter((f) => f.startsWith('params_shard_'))).toHaveLength(2);
  }, 90_000);

  it('--format gguf --quant Q4_K_M --tokenizer tiny-bpe writes split MoE parts byte-identical to the library', async () => {
    const out = join(tmp, 'gguf');
    const { stdout } = await run(process.execPath, [...cli, '--out', out, '--format', 'gguf', '--quant', 'Q4_K_M', '--tokenizer', 'tiny-bpe',
      '--layers', '2', '--seed', '5', '--head-dim', '64', '--intermediate', '256', '--experts', '4', '--top-k', '2', '--shards', '2']);
    expect(stdout).toMatch(/tiny-qwen3-moe-Q4_K_M-00001-of-00002\.gguf, tiny-qwen3-moe-Q4_K_M-00002-of-00002\.gguf/);
    const { tinyBpeGgufVocab } = await import('../../../../src/model/tiny/write-node.ts');
    const { tinyGgufFiles } = await import('../../../../src/model/tiny/tiny-gguf.ts');
    const lib = tinyGgufFiles({ layers: 2, seed: 5, headDim: 64, intermediate: 256, fileType: 'Q4_K_M', splits: 2, moe: { experts: 4, topK: 2 } },
      await tinyBpeGgufVocab());
    expect([...lib.keys()].sort()).toEqual((await readdir(out)).sort());
    for (const [name, bytes] of lib) {
      expect(createHash('sha256').update(await readFile(join(out, name))).digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  }, 90_000);

  it('explains bad arguments and exits 2', async () => {
    const err = await run(process.execPath, [...cli, '--out', join(tmp, 'x'), '--format', 'onnx']).catch((e: unknown) => e) as { code: number; stderr: string };
    expect(err.code).toBe(2);
    expect(err.stderr).toMatch(/^make-tiny-model: --format must be safetensors, mlc, both or gguf, got "onnx"\nusage:/);
    const err3 = await run(process.execPath, [...cli, '--out', join(tmp, 'y'), '--quant', 'Q4_K_M']).catch((e: unknown) => e) as { code: number; stderr: string };
    expect(err3.stderr).toMatch(/--quant needs --format gguf/);
    const err4 = await run(process.execPath, [...cli, '--out', join(tmp, 'z'), '--format', 'gguf', '--quant', 'IQ4_XS']).catch((e: unknown) => e) as { code: number; stderr: string };
    expect(err4.stderr).toMatch(/--quant must be one of F32, F16, BF16, Q8_0/);
    const err2 = await run(process.execPath, [...cli, '--layers', '2']).catch((e: unknown) => e) as { code: number; stderr: string };
    expect(err2.code).toBe(2);
    expect(err2.stderr).toMatch(/--out DIR is required/);
  }, 90_000);
});
