// ModelSource implementations: HF id / URL / folder resolution, ranged reads, errors that name the
// URL and status, and the browser folder sources (driven with stand-in File objects).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelSourceError, TruncatedFileError } from '../../../../src/model/errors.ts';
import { DirectoryHandleSource, FileListSource } from '../../../../src/model/sources/browser.ts';
import { HttpModelSource } from '../../../../src/model/sources/http.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import { huggingFaceSource, parseHfId, resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';

let dir: string;
let server: RangeServer;
const DATA = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 255);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pooled-src-'));
  await writeFile(join(dir, 'blob.bin'), DATA);
  await writeFile(join(dir, 'config.json'), '{"model_type":"qwen3"}');
  server = await startRangeServer(dir, { failWith: (p) => (p === 'secret.bin' ? 403 : p === 'broken.bin' ? 500 : undefined) });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('resolveModelSource', () => {
  it('parses Hugging Face ids with and without a revision', () => {
    expect(parseHfId('Qwen/Qwen3-1.7B')).toEqual({ repo: 'Qwen/Qwen3-1.7B', revision: 'main' });
    expect(parseHfId('mlc-ai/Qwen3-1.7B-q4f16_1-MLC@abc123')).toEqual({ repo: 'mlc-ai/Qwen3-1.7B-q4f16_1-MLC', revision: 'abc123' });
    expect(parseHfId('just-a-name')).toBeNull();
    expect(huggingFaceSource('Qwen/Qwen3-1.7B').urlFor('model-00001-of-00002.safetensors'))
      .toBe('https://huggingface.co/Qwen/Qwen3-1.7B/resolve/main/model-00001-of-00002.safetensors');
  });

  it('turns each kind of spec into the right source', async () => {
    const hf = await resolveModelSource('Qwen/Qwen3-1.7B@refs/pr/1');
    expect(hf).toBeInstanceOf(HttpModelSource);
    expect(hf.label).toBe('Qwen/Qwen3-1.7B@refs/pr/1');
    expect((hf as HttpModelSource).urlFor('config.json')).toBe('https://huggingface.co/Qwen/Qwen3-1.7B/resolve/refs%2Fpr%2F1/config.json');
    const url = await resolveModelSource('https://example.org/models/tiny/');
    expect((url as HttpModelSource).urlFor('config.json')).toBe('https://example.org/models/tiny/config.json');
    const relative = await resolveModelSource('/models/tiny', { base: 'http://127.0.0.1:5173/app/index.html' });
    expect((relative as HttpModelSource).urlFor('config.json')).toBe('http://127.0.0.1:5173/models/tiny/config.json');
    const local = await resolveModelSource(dir);
    expect(local).toBeInstanceOf(NodeFolderSource);
    await expect(resolveModelSource('/no/such/folder')).rejects.toThrow(ModelSourceError);
    await expect(resolveModelSource('not a model')).rejects.toThrow(/"not a model" is not a model source/);
  });
});

describe('NodeFolderSource', () => {
  it('reads ranges and whole files, and says when a file is missing or too short', async () => {
    const src = new NodeFolderSource(dir);
    expect(Array.from(await src.readRange('blob.bin', 10, 20))).toEqual(Array.from(DATA.subarray(10, 20)));
    expect((await src.readFile('blob.bin')).byteLength).toBe(1000);
    expect(await src.exists('blob.bin')).toBe(true);
    expect(await src.exists('nope.bin')).toBe(false);
    await expect(src.readRange('blob.bin', 990, 1010)).rejects.toThrow(TruncatedFileError);
    await expect(src.readRange('blob.bin', 990, 1010)).rejects.toThrow(/^blob\.bin: needs bytes \[990, 1010\) but the file is only 1000 bytes long$/);
    await expect(src.readFile('nope.bin')).rejects.toThrow(/^nope\.bin: file not found: .*nope\.bin$/);
    await expect(src.readFile('../etc/passwd')).rejects.toThrow(/leaves the model folder/);
  });
});

describe('HttpModelSource', () => {
  it('sends Range headers and returns exactly the bytes asked for', async () => {
    server.reset();
    const src = new HttpModelSource(server.url);
    expect(Array.from(await src.readRange('blob.bin', 100, 164))).toEqual(Array.from(DATA.subarray(100, 164)));
    expect(server.requests.at(-1)).toMatchObject({ range: 'bytes=100-163', status: 206, bytes: 64 });
    expect(server.bytesSent.get('blob.bin')).toBe(64);
    expect((await src.readRange('blob.bin', 5, 5)).byteLength).toBe(0);
  });

  it('reports a range past the end as a truncated file', async () => {
    const src = new HttpModelSource(server.url);
    await expect(src.readRange('blob.bin', 990, 1010)).rejects.toThrow(/^blob\.bin: needs bytes \[990, 1010\) but the file is only 1000 bytes long$/);
    const err = await src.readRange('blob.bin', 2000, 2010).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect((err as Error).message).toBe('blob.bin: needs bytes [2000, 2010) but the file is only 1000 bytes long');
  });

  it('names the URL and status of failed requests', async () => {
    const src = new HttpModelSource(server.url);
    const e404 = await src.readFile('missing.json').catch((e: unknown) => e) as ModelSourceError;
    expect(e404).toBeInstanceOf(ModelSourceError);
    expect(e404.status).toBe(404);
    expect(e404.url).toBe(`${server.url}/missing.json`);
    expect(e404.message).toBe(`missing.json: not found: HTTP 404 Not Found for ${server.url}/missing.json`);
    const e403 = await src.readRange('secret.bin', 0, 8).catch((e: unknown) => e) as ModelSourceError;
    expect(e403.message).toBe(`secret.bin: access denied (gated or private?): HTTP 403 Forbidden for ${server.url}/secret.bin`);
    const before = server.requests.length;
    await expect(new HttpModelSource(server.url, { retryDelayMs: 1 }).exists('broken.bin'))
      .rejects.toThrow(/HTTP 500 Internal Server Error for http:\/\/127\.0\.0\.1:\d+\/broken\.bin/);
    expect(server.requests.slice(before).map((r) => r.status)).toEqual([500, 500, 500]);   // tried 1 + 2 retries
    expect(await src.exists('missing.json')).toBe(false);
    expect(await src.exists('config.json')).toBe(true);
    const dead = new HttpModelSource('http://127.0.0.1:9', { retryDelayMs: 1 });
    await expect(dead.readFile('config.json')).rejects.toThrow(/^config\.json: GET http:\/\/127\.0\.0\.1:9\/config\.json failed: /);
  });

  it('retries transient failures (5xx, 429) and then reports the last status', async () => {
    let calls = 0;
    const flaky = await startRangeServer(dir, { failWith: (p) => (p === 'blob.bin' && ++calls <= 2 ? (calls === 1 ? 503 : 429) : undefined) });
    try {
      const src = new HttpModelSource(flaky.url, { retryDelayMs: 1 });
      expect(Array.from(await src.readRange('blob.bin', 0, 4))).toEqual(Array.from(DATA.subarray(0, 4)));
      expect(flaky.requests.map((r) => r.status)).toEqual([503, 429, 206]);
      const noRetry = new HttpModelSource(flaky.url, { retries: 0 });
      await expect(noRetry.readFile('broken.bin')).rejects.toThrow(/HTTP 404/);
      expect(flaky.requests.filter((r) => r.path === 'broken.bin')).toHaveLength(1);
    } finally {
      await flaky.close();
    }
  });

  it('reads a file once and slices it when the server ignores Range', async () => {
    const plain = await startRangeServer(dir, { ignoreRange: true });
    try {
      const src = new HttpModelSource(plain.url);
      expect(Array.from(await src.readRange('blob.bin', 0, 8))).toEqual(Array.from(DATA.subarray(0, 8)));
      expect(Array.from(await src.readRange('blob.bin', 500, 600))).toEqual(Array.from(DATA.subarray(500, 600)));
      expect(Array.from(await src.readFile('blob.bin'))).toEqual(Array.from(DATA));
      expect(plain.bytesSent.get('blob.bin')).toBe(1000);
      expect(plain.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
      await expect(src.readRange('blob.bin', 999, 1001)).rejects.toThrow(TruncatedFileError);
    } finally {
      await plain.close();
    }
  });
});

function fakeFile(path: string, bytes: Uint8Array): File {
  const f = new File([bytes as Uint8Array<ArrayBuffer>], path.split('/').pop()!);
  Object.defineProperty(f, 'webkitRelativePath', { value: path });
  return f;
}

describe('browser folder sources', () => {
  it('FileListSource strips the picked folder name and reads ranges with File.slice', async () => {
    const src = new FileListSource([fakeFile('Qwen3-Tiny/config.json', new TextEncoder().encode('{}')), fakeFile('Qwen3-Tiny/sub/blob.bin', DATA)]);
    expect(src.label).toBe('Qwen3-Tiny');
    expect(await src.exists('config.json')).toBe(true);
    expect(await src.exists('Qwen3-Tiny/config.json')).toBe(false);
    expect(Array.from(await src.readRange('sub/blob.bin', 3, 9))).toEqual(Array.from(DATA.subarray(3, 9)));
    await expect(src.readRange('sub/blob.bin', 995, 1005)).rejects.toThrow(TruncatedFileError);
    await expect(src.readFile('model.safetensors')).rejects.toThrow(/^model\.safetensors: file not found in Qwen3-Tiny$/);
  });

  it('DirectoryHandleSource walks sub-folders and treats NotFoundError as absent', async () => {
    const notFound = () => Object.assign(new Error('not found'), { name: 'NotFoundError' });
    const handle = (name: string, entries: Record<string, Uint8Array | object>): FileSystemDirectoryHandle => ({
      name,
      async getDirectoryHandle(n: string) { const e = entries[n]; if (!e || e instanceof Uint8Array) throw notFound(); return e; },
      async getFileHandle(n: string) {
        const e = entries[n];
        if (!(e instanceof Uint8Array)) throw notFound();
        return { getFile: async () => new File([e as Uint8Array<ArrayBuffer>], n) };
      },
    }) as unknown as FileSystemDirectoryHandle;
    const root = handle('models', { 'config.json': new TextEncoder().encode('{"a":1}'), shards: handle('shards', { 'x.bin': DATA }) });
    const src = await resolveModelSource(root);
    expect(src).toBeInstanceOf(DirectoryHandleSource);
    expect(new TextDecoder().decode(await src.readFile('config.json'))).toBe('{"a":1}');
    expect(Array.from(await src.readRange('shards/x.bin', 10, 12))).toEqual(Array.from(DATA.subarray(10, 12)));
    expect(await src.exists('shards/none.bin')).toBe(false);
    expect(await src.exists('nope/x.bin')).toBe(false);
  });
});
