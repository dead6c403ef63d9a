// Loading over HTTP from a local Range server that counts bytes: two layers cost those tensors' bytes
// plus config and headers, not the file; a server that ignores Range still loads, reading each file once.

import { createHash } from 'node:crypto';
import { stat, symlink, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadWeights, planWeights } from '../../../../src/model/load-weights.ts';
import { HttpModelSource } from '../../../../src/model/sources/http.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { tinyModelDir } from '../../../helpers/tiny-model.ts';
import { mixerOf } from '../../../helpers/layer-parts.ts';

let stDir: string;
let mlcDir: string;
let server: RangeServer | undefined;

beforeAll(async () => {
  // The real-size vocabulary: the embedding makes model.safetensors ≈19 MB, so "not the whole file" shows.
  stDir = await tinyModelDir({ layers: 4 });
  mlcDir = await tinyModelDir({ layers: 4, format: 'mlc', shards: 3 });
}, 120_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Names, shapes and a hash of the bytes of every tensor: deep-equal on 19 MB typed arrays is far too slow. */
function fingerprint(value: unknown): unknown {
  if (value instanceof Uint8Array) return `${value.byteLength}:${createHash('sha256').update(value).digest('hex')}`;
  if (value instanceof Map) return [...value].map(([k, v]) => [k, fingerprint(v)]);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fingerprint(v)]));
  return value;
}

const fileSize = async (path: string) => (await stat(path)).size;

describe('ranged loading over HTTP', () => {
  it('two layers of a safetensors model download those tensors plus config and header only', async () => {
    server = await startRangeServer(stDir);
    const src = new HttpModelSource(server.url);
    const plan = await planWeights(new NodeFolderSource(stDir), { layers: [1, 3] });
    const w = await loadWeights(src, { layers: [1, 3] });
    expect([...w.layers.keys()]).toEqual([1, 2]);
    const tensorBytes = 2 * 2 * (64 + 128 * 64 + 16 + 16 + 64 * 64 + 64 + 256 * 64 + 64 * 128);   // BF16, 2 layers
    expect(plan.dataBytes).toBe(tensorBytes);
    const headerBytes = plan.metadataBytes - (await fileSize(join(stDir, 'config.json'))) - (await fileSize(join(stDir, 'generation_config.json')));
    expect(server.bytesSent.get('model.safetensors')).toBe(headerBytes + tensorBytes);
    expect(server.totalBytesSent()).toBe(plan.metadataBytes + plan.dataBytes);
    expect([...server.bytesSent.keys()].sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors']);
    expect(server.bytesSent.get('model.safetensors')!).toBeLessThan((await fileSize(join(stDir, 'model.safetensors'))) / 50);
    const ranges = server.requests.filter((r) => r.path === 'model.safetensors' && r.method === 'GET').map((r) => r.range);
    expect(ranges.every((r) => r?.startsWith('bytes='))).toBe(true);
    // and what arrived equals what the local folder gives
    const local = await loadWeights(new NodeFolderSource(stDir), { layers: [1, 3] });
    expect(fingerprint(w.layers)).toEqual(fingerprint(local.layers));
  });

  it('two layers of an MLC model download only the shards that hold them', async () => {
    server = await startRangeServer(mlcDir);
    const plan = await planWeights(new NodeFolderSource(mlcDir), { layers: [2, 4] });
    const shards = [...new Set(plan.reads.map((r) => r.file))];
    expect(shards).not.toContain('params_shard_0.bin');          // the embedding's shard is not needed
    await loadWeights(new HttpModelSource(server.url), { layers: [2, 4] });
    let shardBytes = 0;
    for (const s of shards) shardBytes += await fileSize(join(mlcDir, s));
    const sent = [...server.bytesSent].filter(([p]) => p.startsWith('params_shard_'));
    expect(Object.fromEntries(sent)).toEqual(Object.fromEntries(await Promise.all(shards.map(async (s) => [s, await fileSize(join(mlcDir, s))]))));
    expect(server.totalBytesSent()).toBe(plan.metadataBytes + shardBytes);
  });

  it('falls back to one whole-file read per file when the server ignores Range', async () => {
    server = await startRangeServer(stDir, { ignoreRange: true });
    const w = await loadWeights(new HttpModelSource(server.url), { layers: [0, 4], embedding: true, head: true });
    const local = await loadWeights(new NodeFolderSource(stDir), { layers: [0, 4], embedding: true, head: true });
    expect(fingerprint(w)).toEqual(fingerprint(local));
    expect(server.bytesSent.get('model.safetensors')).toBe(await fileSize(join(stDir, 'model.safetensors')));
    const gets = server.requests.filter((r) => r.path === 'model.safetensors' && r.method === 'GET');
    expect(gets).toHaveLength(1);
    expect(gets[0]!.status).toBe(200);
  });

  it('resolves a Hugging Face id to /{id}/resolve/{revision}/{file} and loads through it', async () => {
    const hfRoot = await mkdtemp(join(tmpdir(), 'pooled-hf-'));
    try {
      await mkdir(join(hfRoot, 'Qwen', 'Tiny', 'resolve'), { recursive: true });
      await symlink(stDir, join(hfRoot, 'Qwen', 'Tiny', 'resolve', 'v1.0'));
      server = await startRangeServer(hfRoot);
      const src = await resolveModelSource('Qwen/Tiny@v1.0', { hfEndpoint: server.url });
      expect(src.label).toBe('Qwen/Tiny@v1.0');
      const w = await loadWeights(src, { layers: [0, 1] });
      expect(mixerOf(w.layers.get(0), 'attention').qkv.rows).toBe(128);
      expect(server.requests.some((r) => r.path === 'Qwen/Tiny/resolve/v1.0/config.json')).toBe(true);
    } finally {
      await rm(hfRoot, { recursive: true, force: true });
    }
  });
});
