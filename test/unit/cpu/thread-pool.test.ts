// The worker pool's synchronisation (src/cpu/thread-pool.ts): many jobs back to back never lose a
// wake-up or a count, a worker's failing kernel and the caller's failing share end the job with an
// error instead of a wait, and the results stay the single thread's. A hang must fail, not stall CI:
// each pool here gives up after POOL_TIMEOUT_MS and each test has its own bound (see below).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKernelBinary } from '../../../src/cpu/kernel-binary.ts';
import { ThreadPool } from '../../../src/cpu/thread-pool.ts';
import { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import { quantizeGgml } from '../../../src/model/formats/gguf/ggml-quantize.ts';
import { randomF32, testKernels } from './helpers.ts';

// A job's share here is a few microseconds of work; 20 s without a count is a stuck worker even on the
// 2-core CI machine under load, and fails the test long before vitest's own bound.
const POOL_TIMEOUT_MS = 20_000;
// Compiling the threads build on first use and starting workers takes seconds on a busy machine; the
// loops themselves take a few seconds. 180 s bounds a test that would otherwise hang CI.
const BOUND = 180_000;
const JOBS = 3000;

function q8(rows: number, K: number, seed: number) {
  return { kind: 'ggml' as const, rows, cols: K, segments: [{ name: 'w', type: 'Q8_0' as const, rows, bytes: quantizeGgml('Q8_0', randomF32(rows * K, seed, 0.5), rows, K) }] };
}

describe.each([2, 3])('%i threads, jobs back to back', (threads) => {
  let one: WasmKernels, many: WasmKernels;
  beforeAll(async () => {
    one = await testKernels();
    many = await WasmKernels.create(await loadKernelBinary(true), { threads, poolTimeoutMs: POOL_TIMEOUT_MS });
  }, BOUND);
  afterAll(() => many?.close());

  it(`${JOBS} small linears (decode and prefill shapes, memory growing between them) equal one thread's`, () => {
    const w = q8(8 * threads + 1, 64, 7);
    const a = one.placeLinear(w), b = many.placeLinear(w);
    const before = many.poolJobs;
    for (let i = 0; i < JOBS; i++) {
      const n = i % 3 === 0 ? 3 : 1;
      const x = randomF32(n * 64, i);
      const grow = i % 500 === 0 ? 65536 * (1 + i / 500) : 0;   // new pages the next job's buffers land in
      const got = many.frame(() => { many.alloc(grow); return many.linear(b, x, n); });
      const want = one.linear(a, x, n);
      if (got.some((v, j) => !Object.is(v, want[j]))) expect.fail(`job ${i}: differs from one thread`);
    }
    expect(many.poolJobs - before).toBe(JOBS);
  }, BOUND);
});

describe('failures end the job with an error', () => {
  let binary: Uint8Array;
  beforeAll(async () => { binary = await loadKernelBinary(true); }, BOUND);

  async function setUp(threads: number) {
    const memory = new WebAssembly.Memory({ initial: 256, maximum: 65536, shared: true });
    const { instance } = await WebAssembly.instantiate(binary as Uint8Array<ArrayBuffer>, { env: { memory } });
    const k = instance.exports as unknown as { heapBase(): number; linear(...a: number[]): void };
    const pool = await ThreadPool.create(binary, memory, threads, { timeoutMs: POOL_TIMEOUT_MS });
    return { memory, k, pool, base: Math.ceil(k.heapBase() / 16) * 16 };
  }

  it('a worker whose rows lie past the memory: run throws at once, then the pool refuses jobs', async () => {
    const { memory, k, pool, base } = await setUp(2);
    try {
      const K = 32, rowBytes = 34, rows = 64;
      // rows [0, 32) (the caller's) end at the memory's last byte; the worker's rows [32, 64) are past it
      const w = memory.buffer.byteLength - 32 * rowBytes;
      const x = base, y = base + 4096, scratch = base + 8192;
      const job = { fmt: 3, w, scales: 0, x, y, rows, K, n: 1, yStride: rows };
      const t0 = performance.now();
      expect(() => pool.run(job, scratch, (r0, r1, s) => k.linear(3, w, 0, x, y, r0, r1, K, 1, rows, s))).toThrow(/worker 1's kernel failed/);
      expect(performance.now() - t0).toBeLessThan(POOL_TIMEOUT_MS);
      expect(() => pool.run(job, scratch, () => {})).toThrow(/broken by an earlier failure/);
    } finally {
      pool.close();
    }
  }, BOUND);

  it("the caller's own share throwing: the workers are waited for, and later jobs count right", async () => {
    const { memory, k, pool, base } = await setUp(3);
    try {
      // shares long enough (2000 rows of 1024 each) that the workers are still busy when the caller's share throws
      const K = 1024, rows = 6000, rowBytes = 1088;
      const w = base, x = base + rows * rowBytes + 64, y = x + K * 4, scratch = y + rows * 4 + 64;
      new Uint8Array(memory.buffer, w, rows * rowBytes).set(quantizeGgml('Q8_0', randomF32(rows * K, 5, 0.5), rows, K));
      new Float32Array(memory.buffer, x, K).set(randomF32(K, 6));
      const job = { fmt: 3, w, scales: 0, x, y, rows, K, n: 1, yStride: rows };
      const own = (r0: number, r1: number, s: number) => k.linear(3, w, 0, x, y, r0, r1, K, 1, rows, s);
      pool.run(job, scratch, own);
      const want = new Float32Array(memory.buffer, y, rows).slice();
      // the failing share first lets the workers get going (0.3 ms), so they are mid-job when it throws
      const failing = () => { const t = performance.now() + 0.3; while (performance.now() < t); throw new Error('own share failed'); };
      for (let i = 0; i < 20; i++) {
        expect(() => pool.run(job, scratch, failing)).toThrow('own share failed');
        new Float32Array(memory.buffer, y, rows).fill(0);
        pool.run(job, scratch, own);
        if (new Float32Array(memory.buffer, y, rows).some((v, j) => !Object.is(v, want[j]))) expect.fail(`job ${i}: a row was missing`);
      }
    } finally {
      pool.close();
    }
  }, BOUND);
});
