// Static files compressed and cached right: text-like files (JS, CSS, HTML, JSON, WASM, SVG…) go out
// brotli- or gzip-compressed by node:zlib when the browser accepts it, compressed once per file version
// and kept in memory (bounded); Vite's hashed build outputs (assets/name-<hash>.js) are immutable, so they
// carry `Cache-Control: public, max-age=31536000, immutable`; everything else must revalidate (its
// ETag answers 304). A Range request, a file that is not text-like or too big falls through to
// express.static untouched (model weights are read by Range).
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type express from 'express';

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Files compressed at most this big (esbuild.wasm is 14 MB), and what the compressed copies may hold in all. */
export const COMPRESS_LIMITS = { fileBytes: 32 * 2 ** 20, cacheBytes: 128 * 2 ** 20 } as const;

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8', '.json': 'application/json; charset=utf-8', '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.wasm': 'application/wasm', '.svg': 'image/svg+xml', '.txt': 'text/plain; charset=utf-8', '.jinja': 'text/plain; charset=utf-8',
  '.wgsl': 'text/plain; charset=utf-8', '.map': 'application/json; charset=utf-8',
};

/** Vite's output names: a content hash of 8+ url-safe characters before the extension (index-B3xk_9aQ.js). */
export function isHashedAsset(urlPath: string): boolean {
  return /\/assets\/[^/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/.test(urlPath);
}

/** The encoding to send for an Accept-Encoding header: br over gzip, none when neither is accepted (q=0 refuses). */
export function pickEncoding(accept: string | undefined): 'br' | 'gzip' | null {
  const offered = new Map<string, number>();
  for (const part of (accept ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    offered.set(name, q === undefined ? 1 : Number(q));
  }
  const ok = (n: string) => (offered.get(n) ?? offered.get('*') ?? 0) > 0;
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : null;
}

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

interface Packed { mtimeMs: number; size: number; bytes: Buffer }

/**
 * Middleware for the folder `dir` mounted at the app's root (or under a prefix: req.path is relative to
 * it). `immutable`: whether hashed names are immutable (the built app: yes; model folders: no).
 */
export function compressedStatic(dir: string, opts: { immutable: boolean }): express.RequestHandler {
  const cache = new Map<string, Packed>();   // key: file + encoding; insertion order = age
  let held = 0;
  const remember = (key: string, p: Packed) => {
    const old = cache.get(key);
    if (old) { held -= old.bytes.length; cache.delete(key); }
    cache.set(key, p);
    held += p.bytes.length;
    for (const [k, v] of cache) { if (held <= COMPRESS_LIMITS.cacheBytes) break; cache.delete(k); held -= v.bytes.length; }
  };
  const root = path.resolve(dir);
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') { next(); return; }
    let urlPath: string;
    try { urlPath = decodeURIComponent(req.path); } catch { next(); return; }
    if (urlPath.endsWith('/')) urlPath += 'index.html';
    const file = path.join(root, urlPath);
    if (!file.startsWith(root + path.sep) || urlPath.split('/').some((seg) => seg.startsWith('.'))) { next(); return; }
    const type = TYPES[path.extname(file).toLowerCase()];
    if (opts.immutable) res.setHeader('Cache-Control', isHashedAsset(urlPath) ? IMMUTABLE : 'no-cache');
    const encoding = pickEncoding(req.headers['accept-encoding']);
    if (!type || req.headers.range) { next(); return; }
    let stat;
    try { stat = statSync(file); } catch { next(); return; }
    if (!stat.isFile() || stat.size > COMPRESS_LIMITS.fileBytes || stat.size < 512) { next(); return; }
    res.setHeader('Vary', 'Accept-Encoding');
    if (!encoding) { next(); return; }
    const etag = `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}-${encoding}"`;
    res.setHeader('ETag', etag);
    if (req.headers['if-none-match'] === etag) { res.status(304).end(); return; }
    const key = `${file}|${encoding}`;
    const hit = cache.get(key);
    const send = (bytes: Buffer) => {
      res.setHeader('Content-Type', type);
      res.setHeader('Content-Encoding', encoding);
      res.setHeader('Content-Length', String(bytes.length));
      if (req.method === 'HEAD') res.end(); else res.end(bytes);
    };
    if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) { send(hit.bytes); return; }
    readFile(file)
      // Brotli quality 11 takes seconds a megabyte; 5 is within a few percent of it for JS here, in milliseconds.
      .then((raw) => (encoding === 'br'
        ? brotli(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: raw.length > 2 ** 20 ? 5 : 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } })
        : gzip(raw, { level: 6 })))
      .then((bytes) => { remember(key, { mtimeMs: stat.mtimeMs, size: stat.size, bytes }); send(bytes); })
      .catch(() => next());   // express.static serves it as it is
  };
}
