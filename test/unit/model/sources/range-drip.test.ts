// Issue 39, item 2: a model server that drips. Each range answer carries one correctly labelled byte, or a
// body stops after its first bytes with the connection held open: the read stops at its deadline (a grace
// period plus its bytes at a minimum rate, read-deadline.ts) with an error naming the server and the file,
// instead of keeping the load going for ever. A local HTTP server (test/helpers/range-server.ts) on 127.0.0.1.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { ModelSourceError } from '../../../../src/model/errors.ts';
import { HttpModelSource } from '../../../../src/model/sources/http.ts';
import { READ_DEADLINE } from '../../../../src/model/sources/read-deadline.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';

const FILE = 'model.safetensors';
const BYTES = 64 * 1024;
// Scaled down: 1 s grace at 1 MiB/s, so a 64 KiB read has ~1.06 s (the defaults are 30 s + 256 KiB/s).
// Not tighter: the first request of a test file starts Node's HTTP client, ~0.5 s on a busy 2-core machine.
const DEADLINE = { graceMs: 1000, minBytesPerSecond: 2 ** 20 };
let root: string | undefined;
let server: RangeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/** A folder holding one model file of BYTES known bytes; returns them. */
async function modelFolder(): Promise<Uint8Array> {
  root = await mkdtemp(path.join(tmpdir(), 'pooled-drip-'));
  const bytes = new Uint8Array(BYTES).map((_, i) => (i * 31 + 7) & 255);
  await writeFile(path.join(root, FILE), bytes);
  return bytes;
}

/** `p`, or a rejection naming `what` after `ms` (so today's code fails the test instead of hanging it). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} still going after ${ms} ms`)), ms); })]).finally(() => clearTimeout(timer));
}

describe('item 2: range reads from a dripping server', () => {
  test('item 2: one labelled byte per answer: the read stops at its deadline, naming the server and the file', async () => {
    const bytes = await modelFolder();
    server = await startRangeServer(root!, { dripBytes: 1 });
    const source = new HttpModelSource(server.url, { readDeadline: DEADLINE, retries: 0 });
    expect(await source.size(FILE)).toBe(BYTES); // the HTTP client warmed up: the deadline below is the drip's alone
    const t0 = performance.now();
    const err = await within(source.readRange(FILE, 0, BYTES).then(() => null, (e: unknown) => e), 10_000, 'the dripped read');
    const ms = performance.now() - t0;
    console.log(`item 2: a one-byte-per-answer server refused after ${ms.toFixed(0)} ms and ${server.requests.length} requests (deadline ${(DEADLINE.graceMs + BYTES / DEADLINE.minBytesPerSecond * 1000).toFixed(0)} ms)`);
    expect(err).toBeInstanceOf(ModelSourceError);
    expect((err as Error).message).toMatch(new RegExp(`^${FILE}: the server http://127\\.0\\.0\\.1:\\d+ is too slow: \\d+ of ${BYTES} bytes in \\d+\\.\\d s`));
    expect(ms).toBeLessThan(4000);
    expect(server.requests.length).toBeGreaterThan(2);      // it was dripping, answer after answer
    expect(server.requests.length).toBeLessThan(BYTES / 4); // and stopped long before the file's bytes
    expect(new Uint8Array(await readFile(path.join(root!, FILE)))).toEqual(bytes); // the served file is unchanged
  });

  test('item 2: a body that stops after 100 bytes and holds the connection: the read stops at its deadline, naming the server', async () => {
    await modelFolder();
    server = await startRangeServer(root!, { stallAfterBytes: 100 });
    const source = new HttpModelSource(server.url, { readDeadline: DEADLINE, retries: 0 });
    expect(await source.size(FILE)).toBe(BYTES);
    const t0 = performance.now();
    const err = await within(source.readRange(FILE, 0, BYTES).then(() => null, (e: unknown) => e), 10_000, 'the stalled read');
    console.log(`item 2: a stalled body refused after ${(performance.now() - t0).toFixed(0)} ms`);
    expect((err as Error).message).toMatch(/the server http:\/\/127\.0\.0\.1:\d+ is too slow: 100 of 65536 bytes/);
  });

  test('item 2: a whole-file read whose body stalls stops at the deadline of its stated length too', async () => {
    await modelFolder();
    server = await startRangeServer(root!, { stallAfterBytes: 100 });
    const source = new HttpModelSource(server.url, { readDeadline: DEADLINE, retries: 0 });
    expect(await source.size(FILE)).toBe(BYTES);
    const t0 = performance.now();
    const err = await within(source.readFile(FILE).then(() => null, (e: unknown) => e), 10_000, 'the stalled whole-file read');
    console.log(`item 2: a stalled whole-file body refused after ${(performance.now() - t0).toFixed(0)} ms`);
    expect((err as Error).message).toMatch(/the server http:\/\/127\.0\.0\.1:\d+ is too slow: 100 of 65536 bytes/);
  });

  test('item 2: an honest server under the same deadline reads every byte (and the defaults leave room for slow links)', async () => {
    const bytes = await modelFolder();
    server = await startRangeServer(root!);
    const source = new HttpModelSource(server.url, { readDeadline: DEADLINE });
    expect(await source.readRange(FILE, 100, BYTES)).toEqual(bytes.subarray(100));
    expect(await source.readFile(FILE)).toEqual(bytes);
    expect(READ_DEADLINE.graceMs).toBeGreaterThanOrEqual(10_000);
    expect(READ_DEADLINE.minBytesPerSecond).toBeLessThanOrEqual(2 ** 20);
  });
});
