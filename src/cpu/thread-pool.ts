// Workers that run the linear kernel on a share of a weight's rows, all on one shared WebAssembly memory
// (the `threads` build of src/cpu/asm/). The calling thread takes rows [0, R/T), worker i − 1 rows
// [i·R/T, (i+1)·R/T); each row is computed by the same code whatever the split, so 1 and N threads give
// bit-identical results. Synchronisation is a generation counter and a done counter in a small shared
// Int32Array (Atomics.wait / notify), so a call stays synchronous: the caller must be allowed to block
// (Node, or a Web Worker; never a page's main thread, where the engine runs single-threaded).
// Why no wake-up is lost: a worker waits on GEN only while GEN still equals the generation it last ran
// (Atomics.wait compares and sleeps atomically, so a notify before it sleeps is not needed); the caller
// waits on DONE with the count it just read, so a count that moved in between returns at once. DONE
// counts each worker exactly once per generation (a try around the kernel, the count after it), and the
// caller never leaves a job before every worker counted (not even when its own share throws): a worker
// counting late into the next job would push DONE past threads − 1 and that job would wait forever.
import { LINEAR_SCRATCH_BYTES_PER_K } from './scratch-bytes.ts';

// control slots: GEN, STOP, then the job (fmt, w, scales, x, y, rows, K, n, yStride, scratch, threads), DONE,
// FAILED (a worker's kernel threw: it says so here instead of dying silently while the caller waits),
// KIND (0: the f32 kernel `linear`, 1: the integer kernel `linearQ8` over quantized x; same arguments;
// 2, 3, 4: a split job, `attention` / `attentionQ8_0` / `gatedDeltaRule`: NARGS arguments at ARGS, then
// the worker's share [r0, r1) of COUNT (KV heads, value heads); the arguments whose bit is set in SMASK
// are scratch pointers, moved on by index·SSTRIDE bytes so each thread has its own)
const GEN = 0, STOP = 1, JOB = 2, DONE = 13, FAILED = 14, KIND = 15, NARGS = 16, COUNT = 17, SSTRIDE = 18, SMASK = 19, ARGS = 20, MAX_ARGS = 16, SLOTS = ARGS + MAX_ARGS;
/** The kernels a split job runs, by KIND. */
const SPLIT_KINDS = { attention: 2, attentionQ8_0: 3, gatedDeltaRule: 4 } as const;
/** KIND → the export's name, for the worker's program. */
const SPLIT_NAMES = JSON.stringify(Object.fromEntries(Object.entries(SPLIT_KINDS).map(([name, kind]) => [kind, name])));
export type SplitKernel = keyof typeof SPLIT_KINDS;
/**
 * Polls of a control slot before a thread sleeps on it: about 1.5 ms here (a poll is ~15 ns), longer than
 * the gap between a decode step's linears, short enough that an idle pool soon sleeps (a phone's battery).
 */
const SPIN = 100_000;

/** The worker's whole program, as source: it runs unchanged in Node (eval worker) and a browser (blob). */
const WORKER_SOURCE = `
const port = typeof require === 'function' ? require('node:worker_threads').parentPort : self;
const listen = (fn) => (port.on ? port.on('message', fn) : port.addEventListener('message', (e) => fn(e.data)));
listen(async ({ binary, memory, control, index }) => {
  const { instance } = await WebAssembly.instantiate(binary, { env: { memory } });
  const k = instance.exports, c = new Int32Array(control);
  port.postMessage('ready');
  let gen = 0;
  for (;;) {
    const last = gen;
    // spin a little first: a decode step's linears come tens of microseconds apart, and waking from
    // Atomics.wait costs about as much as a small linear's whole share (it made 2 threads no faster)
    for (let i = 0; i < ${SPIN} && Atomics.load(c, ${GEN}) === last; i++);
    if (Atomics.load(c, ${GEN}) === last) Atomics.wait(c, ${GEN}, last);
    gen = Atomics.load(c, ${GEN});
    if (gen === last) continue;   // woken with no new generation: never run (and count) one job twice
    if (Atomics.load(c, ${STOP}) === 1) return;
    const j = ${JOB};
    const threads = c[j + 10];
    // whatever happens below, this worker counts itself done exactly once for this generation: a worker
    // that died or skipped the count would leave the caller waiting for a count that never comes
    try {
      const kind = c[${KIND}];
      if (kind <= 1) {
        const rows = c[j + 5];
        const r0 = Math.floor((index * rows) / threads), r1 = Math.floor(((index + 1) * rows) / threads);
        const scratch = (c[j + 9] >>> 0) + index * Math.ceil((c[j + 6] * ${LINEAR_SCRATCH_BYTES_PER_K}) / 16) * 16;   // linearScratchBytes(K)
        const kernel = kind === 1 ? k.linearQ8 : k.linear;
        if (r1 > r0) kernel(c[j], c[j + 1] >>> 0, c[j + 2] >>> 0, c[j + 3] >>> 0, c[j + 4] >>> 0, r0, r1, c[j + 6], c[j + 7], c[j + 8], scratch);
      } else {
        const count = c[${COUNT}], stride = c[${SSTRIDE}] >>> 0, mask = c[${SMASK}], args = [];
        for (let i = 0; i < c[${NARGS}]; i++) args.push((c[${ARGS} + i] >>> 0) + (mask & (1 << i) ? index * stride : 0));
        const r0 = Math.floor((index * count) / threads), r1 = Math.floor(((index + 1) * count) / threads);
        if (r1 > r0) k[${SPLIT_NAMES}[kind]](...args, r0, r1);
      }
    } catch (e) {
      Atomics.store(c, ${FAILED}, index);
      try { port.postMessage(String(e && e.stack || e)); } catch {}
    }
    if (Atomics.add(c, ${DONE}, 1) + 1 === threads - 1) Atomics.notify(c, ${DONE});
  }
});
`;

interface AnyWorker { postMessage(m: unknown): void; terminate(): unknown }

export interface LinearJob { kind?: 'f32' | 'q8'; fmt: number; w: number; scales: number; x: number; y: number; rows: number; K: number; n: number; yStride: number }

export class ThreadPool {
  /** Jobs split across the workers so far (tests check the pool really ran). */
  jobs = 0;
  /** Why the pool refuses jobs (a worker failed or timed out), or '' while it is sound. */
  private broken = '';

  private constructor(readonly threads: number, private readonly control: Int32Array, private readonly workers: AnyWorker[], private readonly timeoutMs: number) {}

  /** threads − 1 workers on `memory` (shared), each with its own instance of `binary`. */
  static async create(binary: Uint8Array, memory: WebAssembly.Memory, threads: number, opts: { timeoutMs?: number } = {}): Promise<ThreadPool> {
    const timeoutMs = opts.timeoutMs ?? 60_000;   // one linear's share takes well under a second; 60 s is a stuck worker
    if (!(timeoutMs > 0)) throw new RangeError(`ThreadPool: timeoutMs ${timeoutMs} must be positive`);
    if (!(Number.isInteger(threads) && threads >= 2 && threads <= 64)) throw new RangeError(`ThreadPool: ${threads} threads (2..64)`);
    if (!(memory.buffer instanceof SharedArrayBuffer)) throw new TypeError('ThreadPool: the memory is not shared');
    const control = new Int32Array(new SharedArrayBuffer(SLOTS * 4));
    const workers: AnyWorker[] = [];
    const ready: Promise<void>[] = [];
    for (let i = 1; i < threads; i++) {
      const { worker, first } = await spawn();
      workers.push(worker);
      ready.push(first);
      worker.postMessage({ binary, memory, control: control.buffer, index: i });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('ThreadPool: workers did not start within 30 s')), 30_000); });
    try {
      await Promise.race([Promise.all(ready), timeout]);
    } catch (e) {
      workers.forEach((w) => w.terminate());
      throw e;
    } finally {
      clearTimeout(timer);   // a pending timer kept Node alive 30 s after a quick start
    }
    return new ThreadPool(threads, control, workers, timeoutMs);
  }

  /**
   * The linear kernel over all `rows` of the job, split across the threads; `linear` runs the caller's
   * share. scratch: threads × linearScratchBytes(K), one slice per thread. Throws
   * (never hangs) when a worker's kernel failed or the workers did not finish within `timeoutMs`; the
   * pool is then broken and refuses further jobs, since a late worker would otherwise count itself into
   * the next job.
   */
  run(job: LinearJob, scratch: number, linear: (row0: number, row1: number, scratch: number) => void): void {
    const c = this.control, T = this.threads;
    if (this.broken) throw new Error(`ThreadPool: broken by an earlier failure (${this.broken})`);
    this.jobs++;
    c.set([job.fmt, job.w | 0, job.scales | 0, job.x | 0, job.y | 0, job.rows, job.K, job.n, job.yStride, scratch | 0, T], JOB);
    c[KIND] = job.kind === 'q8' ? 1 : 0;
    const r1 = Math.floor(job.rows / T);
    this.start();
    this.finish(() => { if (r1 > 0) linear(0, r1, scratch); });
  }

  /**
   * `kernel` (an export of the kernels taking `args`, then a range [r0, r1) of `count`) split across the
   * threads; `own(r0, r1)` runs the caller's share, with scratch at the args' own pointers. The args at
   * `scratchArgs` are scratch pointers: thread i's are moved on by i·scratchStride bytes. Throws (never
   * hangs) as run() does.
   */
  runSplit(kernel: SplitKernel, args: number[], count: number, scratchArgs: number[], scratchStride: number, own: (r0: number, r1: number) => void): void {
    const c = this.control, T = this.threads;
    if (this.broken) throw new Error(`ThreadPool: broken by an earlier failure (${this.broken})`);
    if (args.length > MAX_ARGS) throw new RangeError(`ThreadPool: ${args.length} arguments (at most ${MAX_ARGS})`);
    this.jobs++;
    c.set(args.map((a) => a | 0), ARGS);
    c[NARGS] = args.length;
    c[COUNT] = count;
    c[SSTRIDE] = scratchStride | 0;
    c[SMASK] = scratchArgs.reduce((m, i) => m | (1 << i), 0);
    c[JOB + 10] = T;
    c[KIND] = SPLIT_KINDS[kernel];
    const r1 = Math.floor(count / T);
    this.start();
    this.finish(() => { if (r1 > 0) own(0, r1); });
  }

  /** Publishes the job written into the control slots: the workers' spin or wait sees the new generation. */
  private start(): void {
    Atomics.store(this.control, DONE, 0);
    Atomics.add(this.control, GEN, 1);
    Atomics.notify(this.control, GEN);
  }

  /** Runs the caller's share, then waits (bounded) for every worker to count itself done. */
  private finish(share: () => void): void {
    const c = this.control, T = this.threads;
    let own: unknown;
    try {
      share();
    } catch (e) {
      own = e;   // still wait for the workers: they are reading this job's buffers and counting into DONE
    }
    const deadline = performance.now() + this.timeoutMs;
    // the workers' shares end about when the caller's does: spin on DONE before sleeping on it
    for (let i = 0; i < SPIN && Atomics.load(c, DONE) < T - 1; i++);
    for (;;) {
      const done = Atomics.load(c, DONE);
      if (done === T - 1) break;
      if (done > T - 1) {   // the invariant above broken: say so rather than wait for a count that is past
        this.broken = `${done} of ${T - 1} workers counted done in generation ${Atomics.load(c, GEN)}`;
        throw new Error(`ThreadPool: ${this.broken}`);
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        this.broken = `a worker did not finish its rows within ${this.timeoutMs} ms (generation ${Atomics.load(c, GEN)}, ${done} of ${T - 1} done)`;
        throw new Error(`ThreadPool: ${this.broken}`);
      }
      Atomics.wait(c, DONE, done, left);   // returns at once if DONE moved since the load: no lost wake-up
    }
    if (own !== undefined) throw own;
    const failed = Atomics.load(c, FAILED);
    if (failed !== 0) {
      this.broken = `worker ${failed}'s kernel failed`;
      throw new Error(`ThreadPool: ${this.broken}`);
    }
  }

  close(): void {
    Atomics.store(this.control, STOP, 1);
    Atomics.add(this.control, GEN, 1);
    Atomics.notify(this.control, GEN);
    for (const w of this.workers) w.terminate();
  }
}

async function spawn(): Promise<{ worker: AnyWorker; first: Promise<void> }> {
  if (typeof process !== 'undefined' && typeof process.versions?.node === 'string' && typeof window === 'undefined') {
    const name = 'node:worker_threads';   // Node only: kept out of browser bundles
    const { Worker } = (await import(/* @vite-ignore */ name)) as typeof import('node:worker_threads');
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    const first = new Promise<void>((resolve, reject) => { worker.once('message', () => resolve()); worker.once('error', reject); });
    return { worker, first };
  }
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const worker = new Worker(url);
  const first = new Promise<void>((resolve, reject) => {
    worker.addEventListener('message', () => resolve(), { once: true });
    worker.addEventListener('error', (e) => reject(new Error(e.message)), { once: true });
  });
  return { worker, first };
}
