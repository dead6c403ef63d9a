// Loading a model never asks for a file that is not there (a browser logs every 404 as a console error):
// a Hugging Face repo answers from the hub's file list, asked once; a plain URL of a single-file
// checkpoint (the built-in model's layout) is asked for model.safetensors before any index.
import { mkdir, mkdtemp, rm, symlink, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readModelConfig } from '../../../../src/model/config.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { HttpModelSource } from '../../../../src/model/sources/http.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../../../src/model/tokenizer.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { tinyModelDir } from '../../../helpers/tiny-model.ts';

let single: string;
let sharded: string;
let server: RangeServer | undefined;
const roots: string[] = [];

beforeAll(async () => {
  single = await tinyModelDir({ layers: 2 });
  sharded = await tinyModelDir({ layers: 2, shards: 2 });
}, 120_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

/** What the app does with a model: tokenizer, config, then one device's weights. */
async function loadLikeTheApp(spec: string, hfEndpoint?: string): Promise<void> {
  const source = await resolveModelSource(spec, hfEndpoint ? { hfEndpoint } : {});
  await Tokenizer.fromSource(source);
  await readModelConfig(source);
  const w = await loadWeights(source, { layers: [0, 2], embedding: true, head: true });
  expect([...w.layers.keys()]).toEqual([0, 1]);
}

/** A local "hub": /{repo}/resolve/{rev}/… serves the folder, /api/models/{repo}/tree/{rev} lists it. */
async function startHub(folder: string, repo: string, revision: string): Promise<RangeServer> {
  const root = await mkdtemp(join(tmpdir(), 'pooled-hub-'));
  roots.push(root);
  await mkdir(join(root, repo, 'resolve'), { recursive: true });
  await symlink(folder, join(root, repo, 'resolve', revision));
  await mkdir(join(root, 'api', 'models', repo, 'tree'), { recursive: true });
  const tree = (await readdir(folder)).map((path) => ({ type: 'file', path, size: 1 }));
  await writeFile(join(root, 'api', 'models', repo, 'tree', revision), JSON.stringify(tree));
  return startRangeServer(root);
}

const misses = (s: RangeServer) => s.requests.filter((r) => r.status >= 400).map((r) => `${r.method} ${r.path} ${r.status}`);

describe('no request for a missing file', () => {
  it('a Hugging Face id: one file-list request, no HEAD probes, no 404', async () => {
    server = await startHub(sharded, 'Qwen/Tiny', 'main');
    await loadLikeTheApp('Qwen/Tiny', server.url);
    expect(misses(server)).toEqual([]);
    expect(server.requests.filter((r) => r.path.startsWith('api/')).map((r) => r.path)).toEqual(['api/models/Qwen/Tiny/tree/main']);
    expect(server.requests.filter((r) => r.method === 'HEAD')).toEqual([]);
    expect(server.requests.some((r) => r.path === 'Qwen/Tiny/resolve/main/model.safetensors.index.json' && r.status === 200)).toBe(true);
  });

  it('the hub resolve URL the app builds for an id is read the same way', async () => {
    server = await startHub(single, 'Qwen/Tiny', 'v1');
    await loadLikeTheApp(`${server.url}/Qwen/Tiny/resolve/v1`, server.url);
    expect(misses(server)).toEqual([]);
    expect(server.requests.filter((r) => r.method === 'HEAD')).toEqual([]);
  });

  it('a hub without the file list: the files are probed one by one instead', async () => {
    server = await startHub(single, 'Qwen/Tiny', 'main');
    const src = await resolveModelSource('Qwen/Tiny@other', { hfEndpoint: server.url });
    expect(await src.exists('config.json')).toBe(false);       // no such revision: probed, not listed
    expect(server.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET api/models/Qwen/Tiny/tree/other 404', 'HEAD Qwen/Tiny/resolve/other/config.json 404',
    ]);
  });

  it('a plain URL of a single-file checkpoint (the built-in model): no 404', async () => {
    server = await startRangeServer(single);
    await loadLikeTheApp(server.url);
    expect(misses(server)).toEqual([]);
  });

  it('a plain URL of a sharded checkpoint: model.safetensors is the one file asked for in vain, once', async () => {
    server = await startRangeServer(sharded);
    const source = new HttpModelSource(server.url);
    await readModelConfig(source);
    await loadWeights(source, { layers: [0, 2] });
    expect(misses(server)).toEqual(['HEAD model.safetensors 404']);
  });
});
