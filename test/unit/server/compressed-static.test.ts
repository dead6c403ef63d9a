// The real server's static files: hashed build outputs compressed (brotli, else gzip) and immutable for a
// year; index.html compressed but revalidated; a repeat with the ETag is a 304 of no bytes; a Range read
// of a model file is untouched (weights are read by Range); model text files are compressed too. The
// bodies are decompressed here with node:zlib and compared with the files on disk.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type RunningServer } from '../../../server/app.ts';
import { IMMUTABLE, isHashedAsset, pickEncoding } from '../../../server/compressed-static.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { explainError } from '../../../src/app/explain-error.ts';

let server: RunningServer;
let root: string;
const js = `export const x = ${JSON.stringify('a fairly repetitive line of script. '.repeat(400))};\n`;
const html = `<!doctype html><title>pooled</title>${'<p>hello</p>'.repeat(200)}`;
const tokenizer = JSON.stringify({ model: { vocab: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`tok${i}`, i])) } });
const weights = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) & 255));

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'pooled-static-'));
  mkdirSync(path.join(root, 'dist', 'assets'), { recursive: true });
  writeFileSync(path.join(root, 'dist', 'index.html'), html);
  writeFileSync(path.join(root, 'dist', 'assets', 'index-B3xk_9aQ.js'), js);
  const models = path.join(root, 'models');
  mkdirSync(models);
  writeFileSync(path.join(models, 'tokenizer.json'), tokenizer);
  writeFileSync(path.join(models, 'model.safetensors'), weights);
  server = await startServer({ port: 0, root, extraStatic: { '/models/tiny': models } });
}, 30_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

function get(p: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(`${server.url}${p}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('compressed, cached static files', () => {
  test('a hashed asset: brotli when accepted, smaller than the file, the same bytes decompressed, immutable', async () => {
    const r = await get('/assets/index-B3xk_9aQ.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['cache-control']).toBe(IMMUTABLE);
    expect(r.headers['content-type']).toMatch(/^text\/javascript/);
    expect(r.headers.vary).toMatch(/Accept-Encoding/);
    expect(r.body.length).toBeLessThan(js.length / 5);
    expect(zlib.brotliDecompressSync(r.body).toString()).toBe(js);
    // gzip for a browser that takes only gzip; none for one that takes neither.
    const g = await get('/assets/index-B3xk_9aQ.js', { 'accept-encoding': 'gzip' });
    expect(g.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(g.body).toString()).toBe(js);
    const plain = await get('/assets/index-B3xk_9aQ.js', { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(js);
    expect(plain.headers['cache-control']).toBe(IMMUTABLE);
  });

  test('index.html: compressed, revalidated (no-cache), and its ETag answers 304 with no body', async () => {
    const r = await get('/', { 'accept-encoding': 'br' });
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(zlib.brotliDecompressSync(r.body).toString()).toBe(html);
    const again = await get('/', { 'accept-encoding': 'br', 'if-none-match': String(r.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  test('model files: tokenizer.json compressed; a Range read of the weights is the exact bytes, uncompressed', async () => {
    const t = await get('/models/tiny/tokenizer.json', { 'accept-encoding': 'gzip, br' });
    expect(t.headers['content-encoding']).toBe('br');
    expect(t.headers['cache-control']).not.toBe(IMMUTABLE);
    expect(zlib.brotliDecompressSync(t.body).toString()).toBe(tokenizer);
    const w = await get('/models/tiny/model.safetensors', { 'accept-encoding': 'gzip, br', range: 'bytes=100-199' });
    expect(w.status).toBe(206);
    expect(w.headers['content-encoding']).toBeUndefined();
    expect(w.body.equals(weights.subarray(100, 200))).toBe(true);
  });

  test('the rules on their own: hashed names, Accept-Encoding with q values', () => {
    expect(isHashedAsset('/assets/index-B3xk_9aQ.js')).toBe(true);
    expect(isHashedAsset('/assets/esbuild-CwV1a2b3.wasm')).toBe(true);
    expect(isHashedAsset('/index.html')).toBe(false);
    expect(isHashedAsset('/replay/demo.jsonl')).toBe(false);
    expect(pickEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(pickEncoding('br;q=0, gzip;q=0.8')).toBe('gzip');
    expect(pickEncoding('*')).toBe('br');
    expect(pickEncoding('identity')).toBeNull();
    expect(pickEncoding(undefined)).toBeNull();
  });
});

describe('missing files are not found (not the page)', () => {
  test("the app's own routes get the page; a missing file, a source map or a model's config is a 404", async () => {
    for (const route of ['/', '/room/abc']) {
      const r = await get(route);
      expect([r.status, r.body.toString()]).toEqual([200, html]);
    }
    for (const missing of ['/assets/main.js.map', '/my-model/config.json', '/my-model/model.gguf']) {
      const r = await get(missing);
      expect(r.status).toBe(404);
      expect(r.body.toString()).toBe(`not found: ${missing}\n`);
    }
  });

  test('a model URL with nothing behind it on this server says "not found" in plain words', async () => {
    const source = await resolveModelSource(`${server.url}/my-model/`);
    const error = await loadWeights(source, { layers: [0, 1], embedding: true, head: true }).then(() => null, (e: Error) => e);
    expect(error).not.toBeNull();
    const explained = explainError(`${error!.name}: ${error!.message}`);
    expect(explained.what).toMatch(/not found/);
    expect(explained.detail).toMatch(/neither config.json nor mlc-chat-config.json found/);
  });
});

