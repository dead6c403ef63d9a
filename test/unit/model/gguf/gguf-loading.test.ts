// GGUF models through every kind of source: a URL served by our local Range server (only the header and
// the device's own tensors travel, merged into few reads, cached like any range), a Hugging Face repo +
// quant name (the hub listing picks the file), a local file or folder, and split files.

import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadModelConfig } from '../../../../src/model/config.ts';
import { SplitPartMissingError } from '../../../../src/model/errors.ts';
import { loadWeights, planWeights } from '../../../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { linearRowsToFloat32 } from '../../../../src/model/tensor-utils.ts';
import type { ModelSource } from '../../../../src/model/types.ts';
import { CachingSource, MemoryByteStore } from '../../../../src/room/weight-cache.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { tinyGgufModel, tinyModelDir } from '../../../helpers/tiny-model.ts';
import { ffnOf, mixerOf } from '../../../helpers/layer-parts.ts';

let q4: Awaited<ReturnType<typeof tinyGgufModel>>;
let split: Awaited<ReturnType<typeof tinyGgufModel>>;
let server: RangeServer | undefined;
let tmp: string;

beforeAll(async () => {
  q4 = await tinyGgufModel({ layers: 4, seed: 2, fileType: 'Q4_K_M' });
  split = await tinyGgufModel({ layers: 4, seed: 2, fileType: 'Q4_K_M', splits: 3 });
  tmp = await mkdtemp(join(tmpdir(), 'gguf-load-'));
}, 180_000);
afterEach(async () => { await server?.close(); server = undefined; });
afterAll(async () => { await rm(tmp, { recursive: true, force: true }); });

const hash = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
function fingerprint(value: unknown): unknown {
  if (value instanceof Uint8Array) return `${value.byteLength}:${hash(value)}`;
  if (value instanceof Map) return [...value].map(([k, v]) => [k, fingerprint(v)]);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fingerprint(v)]));
  return value;
}


// Each of these loads whole tiny GGUF models over a 127.0.0.1 range server (and dequantizes them); on a
// loaded 2-core CI box they ran past vitest's 30 s, so each states its own bound.
const GGUF_LOAD = 120_000;
describe('GGUF over HTTP Range', () => {
  it('a .gguf URL: header plus the requested layers\' tensors only, in merged reads', { timeout: GGUF_LOAD }, async () => {
    server = await startRangeServer(q4.dir);
    const src = await resolveModelSource(`${server.url}/${q4.file}`);
    expect(src.modelFile).toBe(q4.file);
    const plan = await planWeights(src, { layers: [1, 3] });
    server.reset();
    const w = await loadWeights(src, { layers: [1, 3] });
    expect([...w.layers.keys()]).toEqual([1, 2]);
    const data = server.requests.filter((r) => r.method === 'GET');
    expect(server.totalBytesSent()).toBe(plan.dataBytes);                          // the header was parsed once, for the plan
    expect(plan.reads.length).toBe(1);                                            // layers 1-2 are contiguous: one read
    expect(data.length).toBe(1);
    expect(plan.dataBytes).toBe([...plan.layerBytes.values()].reduce((a, b) => a + b, 0));
    const fileBytes = (await stat(q4.path)).size;
    expect(plan.dataBytes).toBeLessThan(fileBytes / 20);                           // the Q8_0 embedding is most of the file
    const local = await loadWeights(new NodeFolderSource(q4.dir, q4.file), { layers: [1, 3] });
    expect(fingerprint(w.layers)).toEqual(fingerprint(local.layers));
  });

  it('the header of a full Qwen3 vocabulary arrives in a few ranged reads', async () => {
    server = await startRangeServer(q4.dir);
    await loadModelConfig(await resolveModelSource(`${server.url}/${q4.file}`));
    const gets = server.requests.filter((r) => r.method === 'GET');
    expect(gets.length).toBeLessThanOrEqual(5);
    expect(gets.every((r) => r.status === 206)).toBe(true);
  });

  it('a second load through the device cache reads nothing from the network', { timeout: GGUF_LOAD }, async () => {
    server = await startRangeServer(q4.dir);
    const store = new MemoryByteStore();
    const first = new CachingSource(await resolveModelSource(`${server.url}/${q4.file}`), store, 'tiny-gguf');
    const a = await loadWeights(first, { layers: [0, 2], embedding: true, head: true });
    expect(first.counts.networkBytes).toBeGreaterThan(0);
    server.reset();
    const second = new CachingSource(await resolveModelSource(`${server.url}/${q4.file}`), store, 'tiny-gguf');
    const b = await loadWeights(second, { layers: [0, 2], embedding: true, head: true });
    expect(server.totalBytesSent()).toBe(0);
    expect(second.counts.networkBytes).toBe(0);
    expect(fingerprint(b.layers)).toEqual(fingerprint(a.layers));
  });
});

describe('finding the GGUF file', () => {
  it('a Hugging Face repo + quant name picks the file from the hub listing', { timeout: GGUF_LOAD }, async () => {
    const root = join(tmp, 'hub');
    const repo = join(root, 'Qwen', 'Tiny-GGUF', 'resolve', 'main');
    await mkdir(repo, { recursive: true });
    const q8 = await tinyGgufModel({ layers: 2, seed: 2, fileType: 'Q8_0' });
    await cp(q4.path, join(repo, 'Tiny-Q4_K_M.gguf'));
    await cp(q8.path, join(repo, 'Tiny-Q8_0.gguf'));
    await mkdir(join(root, 'api', 'models', 'Qwen', 'Tiny-GGUF', 'tree'), { recursive: true });
    await writeFile(join(root, 'api', 'models', 'Qwen', 'Tiny-GGUF', 'tree', 'main'), JSON.stringify([
      { type: 'file', path: 'README.md', size: 10 }, { type: 'file', path: 'Tiny-Q4_K_M.gguf', size: 1, lfs: { size: (await stat(q4.path)).size } },
      { type: 'file', path: 'Tiny-Q8_0.gguf', size: 1 }, { type: 'directory', path: 'extra' },
    ]));
    server = await startRangeServer(root);
    const src = await resolveModelSource('Qwen/Tiny-GGUF:Q8_0', { hfEndpoint: server.url });
    expect(src.modelFile).toBe('Tiny-Q8_0.gguf');
    expect((await loadModelConfig(src)).numLayers).toBe(2);
    const byName = await resolveModelSource('Qwen/Tiny-GGUF:Tiny-Q4_K_M.gguf', { hfEndpoint: server.url });
    expect((await loadModelConfig(byName)).numLayers).toBe(4);
    await expect(resolveModelSource('Qwen/Tiny-GGUF:Q6_K', { hfEndpoint: server.url })).rejects.toThrow(/no GGUF file for "Q6_K" in Qwen\/Tiny-GGUF@main \(it has Tiny-Q4_K_M.gguf, Tiny-Q8_0.gguf\)/);
    await expect(resolveModelSource('Qwen/Nope-GGUF:Q8_0', { hfEndpoint: server.url })).rejects.toThrow(/not found/);
  });

  it('a local .gguf file, a folder holding one, and folder:QUANT', async () => {
    const byFile = await resolveModelSource(q4.path);
    expect(byFile.modelFile).toBe(q4.file);
    const byFolder = await resolveModelSource(q4.dir);
    expect(byFolder.modelFile).toBe(q4.file);
    const two = join(tmp, 'two');
    await mkdir(two, { recursive: true });
    await cp(q4.path, join(two, 'm-Q4_K_M.gguf'));
    await cp(q4.path, join(two, 'm-Q8_0.gguf'));
    await expect(resolveModelSource(two)).rejects.toThrow(/holds 2 GGUF models .*name one/);
    expect((await resolveModelSource(`${two}:Q8_0`)).modelFile).toBe('m-Q8_0.gguf');
    const st = await tinyModelDir({ layers: 1 });
    expect((await resolveModelSource(st)).modelFile).toBeUndefined();           // safetensors folders are unchanged
  });
});

describe('split GGUF', () => {
  it('three parts load the same weights as one file', { timeout: GGUF_LOAD }, async () => {
    const src = await resolveModelSource(join(split.dir, split.file));
    expect(split.file).toMatch(/-00001-of-00003\.gguf$/);
    const [a, b] = await Promise.all([
      loadWeights(src, { layers: [0, 4], embedding: true, head: true }),
      loadWeights(await resolveModelSource(q4.path), { layers: [0, 4], embedding: true, head: true }),
    ]);
    for (let i = 0; i < 4; i++) {
      const [x, y] = [mixerOf(a.layers.get(i), 'attention'), mixerOf(b.layers.get(i), 'attention')];
      expect(Array.from(linearRowsToFloat32(x.qkv, 0, x.qkv.rows))).toEqual(Array.from(linearRowsToFloat32(y.qkv, 0, y.qkv.rows)));
      expect(fingerprint(ffnOf(a.layers.get(i), 'dense').down)).toEqual(fingerprint(ffnOf(b.layers.get(i), 'dense').down));
    }
    expect(fingerprint(a.embedding)).toEqual(fingerprint(b.embedding));
  });

  it('a missing part is a SplitPartMissingError naming it', async () => {
    const dir = join(tmp, 'split');
    await cp(split.dir, dir, { recursive: true });
    const second = split.file.replace('-00001-', '-00002-');
    await rm(join(dir, second));
    const err = await resolveModelSource(join(dir, split.file)).then((s: ModelSource) => loadModelConfig(s)).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(SplitPartMissingError);
    expect((err as Error).message).toContain(second);
  });
});
