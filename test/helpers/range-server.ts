// A static file server on 127.0.0.1 for model-loading tests: serves a folder with HTTP Range support
// (single ranges: "bytes=a-b", "bytes=a-", "bytes=-n"), counts body bytes sent per file, and can be
// told to ignore Range (answer 200 with the whole file) or to fail chosen paths with a status.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize, sep } from 'node:path';
import { MODEL_HOST_HEADERS } from '../../server/isolation.ts';

export interface RangeServerOptions {
  /** Answer every GET with 200 and the whole file, as some static hosts do. */
  ignoreRange?: boolean;
  /** Return a status code to fail a request for this path (relative, no leading slash). */
  failWith?: (path: string) => number | undefined;
  /** Send what a model host on another origin must (server/isolation.ts MODEL_HOST_HEADERS: CORS, CORP) and answer the CORS preflight. */
  crossOrigin?: boolean;
  /** A server that drips: each range answer carries only this many bytes (correctly labelled in Content-Range). */
  dripBytes?: number;
  /** A server that stalls: each body sends this many bytes, then holds the connection open without another. */
  stallAfterBytes?: number;
  /** A slow link: each body is sent in 64 KiB pieces at about this many bytes a second. */
  bytesPerSecond?: number;
  /** Which paths the slow link applies to (default every path): e.g. the weights only, not an 11 MB tokenizer. */
  slowPaths?: (path: string) => boolean;
}

export interface ServedRequest { method: string; path: string; range?: string; status: number; bytes: number }

export interface RangeServer {
  url: string;                                   // "http://127.0.0.1:PORT" (no trailing slash)
  /** Body bytes sent per path since start / reset. */
  bytesSent: Map<string, number>;
  requests: ServedRequest[];
  totalBytesSent(): number;
  reset(): void;
  close(): Promise<void>;
}

function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;           // malformed or multi-range: ignore, send all
  let start: number, end: number;                                 // end exclusive
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1);
  }
  if (start >= size || end <= start) return 'unsatisfiable';
  return { start, end };
}

export async function startRangeServer(root: string, opts: RangeServerOptions = {}): Promise<RangeServer> {
  const bytesSent = new Map<string, number>();
  const requests: ServedRequest[] = [];
  const rootDir = normalize(root);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
    const method = req.method ?? 'GET';
    const rangeHeader = req.headers.range;
    const record = (status: number, bytes: number) => {
      requests.push({ method, path, ...(rangeHeader ? { range: rangeHeader } : {}), status, bytes });
      if (bytes > 0) bytesSent.set(path, (bytesSent.get(path) ?? 0) + bytes);
    };
    const full = normalize(join(rootDir, path));
    if (opts.crossOrigin) {
      for (const [k, v] of Object.entries(MODEL_HOST_HEADERS)) res.setHeader(k, v);
      if (method === 'OPTIONS') {
        res.writeHead(204, { 'Access-Control-Allow-Headers': 'Range', 'Access-Control-Allow-Methods': 'GET, HEAD' }).end();
        record(204, 0);
        return;
      }
    }
    const fail = opts.failWith?.(path);
    if (fail !== undefined) {
      res.writeHead(fail, { 'Content-Type': 'text/plain' }).end(`failing ${path} on purpose`);
      record(fail, 0);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405).end();
      record(405, 0);
      return;
    }
    let size: number;
    try {
      if (!full.startsWith(rootDir + sep) && full !== rootDir) throw new Error('outside root');
      const st = await stat(full);
      if (!st.isFile()) throw new Error('not a file');
      size = st.size;
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      record(404, 0);
      return;
    }
    const headers: Record<string, string | number> = { 'Content-Type': 'application/octet-stream' };
    if (!opts.ignoreRange) headers['Accept-Ranges'] = 'bytes';
    const range = rangeHeader && !opts.ignoreRange ? parseRange(rangeHeader, size) : null;
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
      record(416, 0);
      return;
    }
    const start = range ? range.start : 0;
    const end = range && opts.dripBytes !== undefined ? Math.min(range.end, range.start + opts.dripBytes) : range ? range.end : size;
    const status = range ? 206 : 200;
    headers['Content-Length'] = end - start;
    if (range) headers['Content-Range'] = `bytes ${start}-${end - 1}/${size}`;
    res.writeHead(status, headers);
    if (method === 'HEAD' || end === start) {
      res.end();
      record(status, 0);
      return;
    }
    // Counted before sending so a test that has its response also sees the count (no close-event race).
    record(status, end - start);
    if (opts.stallAfterBytes !== undefined) {
      createReadStream(full, { start, end: Math.min(end, start + opts.stallAfterBytes) - 1 }).on('data', (b) => res.write(b)); // and never res.end()
      return;
    }
    if (opts.bytesPerSecond !== undefined && (opts.slowPaths?.(path) ?? true)) {
      const rate = opts.bytesPerSecond;
      const stream = createReadStream(full, { start, end: end - 1, highWaterMark: 64 * 1024 });
      stream.on('data', (b) => {
        stream.pause();
        res.write(b);
        setTimeout(() => stream.resume(), (b.length / rate) * 1000);
      });
      stream.on('end', () => res.end());
      res.on('close', () => stream.destroy());
      return;
    }
    createReadStream(full, { start, end: end - 1 }).pipe(res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bytesSent,
    requests,
    totalBytesSent: () => [...bytesSent.values()].reduce((a, b) => a + b, 0),
    reset: () => { bytesSent.clear(); requests.length = 0; },
    close: () => new Promise<void>((ok, err) => {
      server.closeAllConnections();
      server.close((e) => (e ? err(e) : ok()));
    }),
  };
}
