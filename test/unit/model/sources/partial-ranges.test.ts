// A 206 that brings fewer bytes than asked is not a short file: HTTP lets a server send part of a range
// (CDNs cap range sizes) and a loaded server or a dropped connection ends a body early. The source asks
// again for the rest; only a Content-Range total below the range's end (or a 416) is a truncated file,
// and a server that keeps answering with nothing fails after its retries with what it did send named.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ModelSourceError, TruncatedFileError } from '../../../../src/model/errors.ts';
import { HttpModelSource } from '../../../../src/model/sources/http.ts';

const FILE = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7 + 3) & 0xff);

/** How the server answers a Range request for bytes [a, b]. */
type Mode = 'cap-1000' | 'cut-short' | 'then-nothing' | 'claims-short';
let mode: Mode = 'cap-1000';
const requests: string[] = [];

function handle(req: IncomingMessage, res: ServerResponse): void {
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (!m) { res.writeHead(200, { 'content-length': FILE.length }).end(Buffer.from(FILE)); return; }
  const a = Number(m[1]), b = Math.min(Number(m[2]), FILE.length - 1);
  requests.push(`${a}-${b}`);
  const first = requests.length === 1;
  if (mode === 'cap-1000') {
    // An honest partial answer: the Content-Range says only 1000 bytes come.
    const last = Math.min(b, a + 999);
    res.writeHead(206, { 'content-range': `bytes ${a}-${last}/${FILE.length}`, 'content-length': last - a + 1 }).end(Buffer.from(FILE.subarray(a, last + 1)));
    return;
  }
  const total = mode === 'claims-short' ? 5000 : FILE.length;
  // Chunked (no Content-Length): the body just ends, as when the server gives up mid-range.
  res.writeHead(206, { 'content-range': `bytes ${a}-${Math.min(b, total - 1)}/${total}` });
  const take = mode === 'cut-short' ? Math.min(b - a + 1, 1234) : mode === 'then-nothing' && !first ? 0 : Math.min(b - a + 1, 777);
  res.end(Buffer.from(FILE.subarray(a, a + take)));
}

let server: ReturnType<typeof createServer>;
let base = '';
beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { await new Promise<void>((r) => server.close(() => r())); });

function source(): HttpModelSource {
  requests.length = 0;
  return new HttpModelSource(base, { retries: 2, retryDelayMs: 0 });
}

describe('a 206 with fewer bytes than asked', () => {
  test('a server that caps each answer at 1000 bytes: the rest is asked for until the range is whole', async () => {
    mode = 'cap-1000';
    const bytes = await source().readRange('model.bin', 1500, 6500);
    expect(Buffer.from(bytes).equals(Buffer.from(FILE.subarray(1500, 6500)))).toBe(true);
    expect(requests).toEqual(['1500-6499', '2500-6499', '3500-6499', '4500-6499', '5500-6499']);
  });

  test('bodies that end early (no length, the connection just ends): the rest is asked for, the bytes are exact', async () => {
    mode = 'cut-short';
    const bytes = await source().readRange('model.bin', 100, 4100);
    expect(Buffer.from(bytes).equals(Buffer.from(FILE.subarray(100, 4100)))).toBe(true);
    expect(requests[0]).toBe('100-4099');
    expect(requests.length).toBe(Math.ceil(4000 / 1234));
  });

  test('a server that sends part and then nothing: a ModelSourceError that says how much came, after the retries', async () => {
    mode = 'then-nothing';
    const err = await source().readRange('model.bin', 0, 3000).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModelSourceError);
    expect(err).not.toBeInstanceOf(TruncatedFileError);
    expect(String((err as Error).message)).toMatch(/sent 777 of the 3000 bytes asked for in \[0, 3000\)/);
    expect(requests.length).toBe(1 + 3);   // the first answer, then retries + 1 empty ones
  });

  test('a Content-Range total below the range end is a truncated file, said at once', async () => {
    mode = 'claims-short';
    const err = await source().readRange('model.bin', 4000, 6000).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect(String((err as Error).message)).toMatch(/needs bytes \[4000, 6000\) but the file is only 5000 bytes long/);
    expect(requests.length).toBe(1);
  });
});
