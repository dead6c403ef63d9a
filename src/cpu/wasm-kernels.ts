// One instance of the WASM kernels (src/cpu/asm/) and the memory they work in. JS owns the memory:
// weights and caches are placed once (`put`, `alloc`) from the bottom up; each operation's inputs and
// outputs live in a frame above them that is dropped when it returns (`frame`). A wasm32 memory is at
// most 4 GiB, so that is the most one CPU engine can hold.
import { linearParts, type FormatCode } from './formats.ts';
import { linearScratchBytes } from './scratch-bytes.ts';
import { ThreadPool, type SplitKernel } from './thread-pool.ts';
import type { Linear, StreamRef } from '../model/types.ts';
import { EngineUsageError } from '../model/engine-errors.ts';
import type { CpuActivations, SimdPath } from './simd-path.ts';

const PAGE = 65536;
const MAX_PAGES = 65536;       // 4 GiB

interface KernelExports {
  heapBase(): number;
  relaxedSimd(): number;
  rowBytes(fmt: number, K: number): number;
  dequantRow(fmt: number, src: number, scales: number, dst: number, K: number): void;
  linear(fmt: number, w: number, scales: number, x: number, y: number, row0: number, row1: number, K: number, n: number, yStride: number, scratch: number): void;
  linearQ8(fmt: number, w: number, scales: number, xq: number, y: number, row0: number, row1: number, K: number, n: number, yStride: number, unused: number): void;
  linearQ8Covers(fmt: number): number;
  q8Bytes(n: number, K: number): number;
  quantizeQ8(x: number, xq: number, n: number, K: number): void;
  rmsnorm(x: number, w: number, y: number, rows: number, width: number, eps: number): void;
  rope(x: number, cs: number, n: number, heads: number, D: number, R: number): void;
  siluMul(gu: number, out: number, n: number, I: number): void;
  toHalf(src: number, dst: number, count: number): void;
  fromHalf(src: number, dst: number, count: number): void;
  addInPlace(x: number, y: number, count: number): void;
  attention(q: number, keys: number, values: number, out: number, n: number, pos0: number, Hq: number, Hkv: number, D: number, kbuf: number, scores: number, g0: number, g1: number): void;
  convSilu(x: number, xStride: number, n: number, wT: number, state: number, C: number, K: number, y: number): void;
  deltaGates(ba: number, A: number, dtBias: number, n: number, nv: number, g: number, beta: number): void;
  l2normHeads(x: number, stride: number, n: number, heads: number, dim: number, scale: number): void;
  gatedDeltaRule(conv: number, C: number, g: number, beta: number, S: number, out: number, n: number, nk: number, nv: number, dk: number, dv: number, tiled: number, j0: number, j1: number): void;
  gatedRmsNorm(o: number, z: number, zStride: number, w: number, y: number, n: number, nv: number, dv: number, eps: number): void;
  sigmoidGate(x: number, gate: number, count: number): void;
  quantizeQ8_0(src: number, qs: number, ds: number, rows: number, D: number): void;
  dequantQ8_0(qs: number, ds: number, rows: number, D: number, dst: number): void;
  attentionQ8_0(q: number, kq: number, kd: number, vq: number, vd: number, out: number, n: number, pos0: number, Hq: number, Hkv: number, D: number, kbuf: number, vbuf: number, scores: number, g0: number, g1: number): void;
}

/** Where a Gated DeltaNet layer's operations read and write (addresses in the kernels' memory). */
export interface WasmDeltaShape {
  numKeyHeads: number; numValueHeads: number; keyDim: number; valueDim: number; convKernel: number;
  tiled: boolean;              // value head j reads key head j mod n_k (llama.cpp's GGUFs), else j / (n_v / n_k)
}

/** A q8_0 cache's halves: int8 quants [tokens, Hkv·nb, 32] and f16 scales [tokens, Hkv·nb]. */
export interface Q8Blocks { quants: number; scales: number }

/** Where a streamed part's bytes were reserved (./stream-sink.ts's WasmStreamSink; kept apart so the two files import one way). */
export interface StreamPlaces {
  addressOf(ref: StreamRef, name: string): number;
}

export type { CpuActivations } from './simd-path.ts';

/** A weight placed in the kernels' memory: its row runs, each in one format. */
export interface WasmLinear {
  rows: number;                // N
  cols: number;                // K
  parts: { fmt: FormatCode; rows: number; ptr: number; scales: number; rowBytes: number; scaleRowBytes: number }[];
  bytes: number;               // weight bytes held
  name: string;
}

export class WasmKernels {
  readonly memory: WebAssembly.Memory;
  /** The build this instance runs, as the module itself says (its relaxedSimd export, set at compile time). */
  readonly simd: SimdPath;
  private readonly k: KernelExports;
  private top: number;
  /** Weight bytes the linears have read (rows × row bytes, scales included); tests count active parameters with it. */
  bytesRead = 0;
  /** Attention calls split across the pool by KV heads so far (tests check the pool really ran them). */
  splitJobs = 0;
  /** The linears' activation path (see CpuActivations); may be changed between calls. */
  activations: CpuActivations;

  private constructor(memory: WebAssembly.Memory, exports: KernelExports, activations: CpuActivations, private readonly pool?: ThreadPool) {
    this.memory = memory;
    this.activations = activations;
    this.k = exports;
    this.simd = exports.relaxedSimd() === 1 ? 'relaxed' : 'plain';
    this.top = align(exports.heapBase());
  }

  /**
   * One instance on a fresh memory. threads > 1 needs the `threads` build (shared memory) and a caller
   * that may block (Node, a Web Worker): the linears' rows are then split over a pool of workers.
   */
  static async create(binary: Uint8Array, opts: { threads?: number; poolTimeoutMs?: number; activations?: CpuActivations } = {}): Promise<WasmKernels> {
    const threads = opts.threads ?? 1;
    const memory = new WebAssembly.Memory({ initial: 16, maximum: MAX_PAGES, ...(threads > 1 ? { shared: true } : {}) });
    const { instance } = await WebAssembly.instantiate(binary as Uint8Array<ArrayBuffer>, { env: { memory } });
    const pool = threads > 1 ? await ThreadPool.create(binary, memory, threads, opts.poolTimeoutMs === undefined ? {} : { timeoutMs: opts.poolTimeoutMs }) : undefined;
    return new WasmKernels(memory, instance.exports as unknown as KernelExports, opts.activations ?? 'f32', pool);
  }

  /** Threads the linears run on (1: this one only). */
  get threads(): number {
    return this.pool?.threads ?? 1;
  }

  /** Linear calls split across the pool so far (0 on one thread). */
  get poolJobs(): number {
    return this.pool?.jobs ?? 0;
  }

  /** Stops the pool's workers (the memory stays readable). */
  close(): void {
    this.pool?.close();
  }

  /** Bytes in use (weights, caches and the current frame). */
  get used(): number {
    return this.top;
  }

  /** The most bytes ever in use at once (the deepest frame over what is placed). */
  get peak(): number {
    return this.high;
  }

  private high = 0;

  /** `bytes` of memory, 16-aligned, zeroed when new. */
  alloc(bytes: number): number {
    const at = this.top;
    const end = align(at + bytes);
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      const pages = Math.ceil((end - have) / PAGE);
      if (have / PAGE + pages > MAX_PAGES) throw new RangeError(`the CPU engine needs ${end} bytes, over a wasm32 memory's 4 GiB`);
      this.memory.grow(pages);
    }
    this.top = end;
    if (end > this.high) this.high = end;
    return at;
  }

  /** A copy of `data` in the memory; its address. */
  put(data: Uint8Array | Float32Array): number {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const at = this.alloc(bytes.byteLength);
    this.u8(at, bytes.byteLength).set(bytes);
    return at;
  }

  /** Runs fn with scratch allocations that are freed when it returns. */
  frame<T>(fn: () => T): T {
    const mark = this.top;
    try { return fn(); } finally { this.top = mark; }
  }

  u8(ptr: number, n: number): Uint8Array { return new Uint8Array(this.memory.buffer, ptr, n); }
  f32(ptr: number, n: number): Float32Array { return new Float32Array(this.memory.buffer, ptr, n); }
  u16(ptr: number, n: number): Uint16Array { return new Uint16Array(this.memory.buffer, ptr, n); }

  /** Where streamed weights were reserved (./stream-sink.ts; set by createCpuEngine for weights from openWeights). */
  streamSink: StreamPlaces | undefined;

  private requireSink(name: string): StreamPlaces {
    if (!this.streamSink) throw new EngineUsageError(`tensor "${name}" is streamed (weights from openWeights) but this CPU engine was made without its load`);
    return this.streamSink;
  }

  /** A Linear's bytes, as stored, placed in the memory. */
  placeLinear(l: Linear): WasmLinear {
    let bytes = 0;
    const parts = linearParts(l).map((p) => {
      const rowBytes = this.k.rowBytes(p.fmt, l.cols);
      const have = p.stream ? p.stream.byteLength : p.bytes.byteLength;
      if (rowBytes < 0 || have !== rowBytes * p.rows) throw new RangeError(`${p.name}: ${have} bytes for ${p.rows} rows of ${l.cols}`);
      // a streamed part already has its place (reserved before the load ran, filled as it passed)
      const ptr = p.stream ? this.requireSink(p.name).addressOf(p.stream, p.name) : this.put(p.bytes);
      const scales = p.scales ? this.put(p.scales) : 0;
      bytes += have + (p.scales?.byteLength ?? 0);
      return { fmt: p.fmt, rows: p.rows, ptr, scales, rowBytes, scaleRowBytes: (l.cols / 32) * 2 };
    });
    return { rows: l.rows, cols: l.cols, parts, bytes, name: linearParts(l).map((p) => p.name).join('+') };
  }

  /** f32 input placed in the current frame. */
  input(x: Float32Array): number {
    const at = this.alloc(x.byteLength);
    this.f32(at, x.length).set(x);
    return at;
  }

  /**
   * y [n, r1 − r0] = x [n, K] · W[r0:r1]ᵀ with x at address xp; writes at yp (yStride floats a token).
   * Walks the row runs, so a fused matrix of mixed types (Q4_K_M's q|k|v) and an expert's rows work alike.
   */
  linearAt(w: WasmLinear, xp: number, n: number, yp: number, yStride: number, r0 = 0, r1 = w.rows): void {
    const K = w.cols;
    const T = this.threads;
    const scratch = this.alloc(T * linearScratchBytes(K));   // per thread: two decoded rows (the f32 linear's prefill pairs)
    let xq = 0;   // x quantized (once, for every part the integer path reads), or 0 while not yet
    let base = 0;
    for (const p of w.parts) {
      const a = Math.max(r0, base), b = Math.min(r1, base + p.rows);
      if (a < b) {
        // row a of the matrix is row (a − base) of this run; its output column is a − r0
        const rowPtr = p.ptr + (a - base) * p.rowBytes;
        const scalePtr = p.scales ? p.scales + (a - base) * p.scaleRowBytes : 0;
        const y = yp + (a - r0) * 4;
        const q8 = this.activations === 'q8' && this.k.linearQ8Covers(p.fmt) !== 0;
        if (q8 && xq === 0) {
          xq = this.alloc(this.k.q8Bytes(n, K));
          this.k.quantizeQ8(xp, xq, n, K);
        }
        const kernel = q8 ? this.k.linearQ8 : this.k.linear;
        const x = q8 ? xq : xp;
        if (this.pool && b - a >= 4 * T) {
          this.pool.run({ kind: q8 ? 'q8' : 'f32', fmt: p.fmt, w: rowPtr, scales: scalePtr, x, y, rows: b - a, K, n, yStride }, scratch,
            (row0, row1, s) => kernel(p.fmt, rowPtr, scalePtr, x, y, row0, row1, K, n, yStride, s));
        } else {
          kernel(p.fmt, rowPtr, scalePtr, x, y, 0, b - a, K, n, yStride, scratch);
        }
        this.bytesRead += (b - a) * (p.rowBytes + (p.scales ? p.scaleRowBytes : 0));
      }
      base += p.rows;
    }
  }

  /** y [n, r1 − r0] = x · W[r0:r1]ᵀ, a fresh array. */
  linear(w: WasmLinear, x: Float32Array, n: number, r0 = 0, r1 = w.rows): Float32Array {
    if (x.length !== n * w.cols) throw new RangeError(`linear ${w.name}: input has ${x.length} values, expected ${n}×${w.cols}`);
    return this.frame(() => {
      const N = r1 - r0;
      const xp = this.input(x), yp = this.alloc(n * N * 4);
      this.linearAt(w, xp, n, yp, N, r0, r1);
      return this.f32(yp, n * N).slice();
    });
  }

  /** x [n, K] quantized as the integer linears quantize it (./asm/quantize.ts): codes, and per [n, K/32] block its scale and d·Σcodes. */
  quantizeQ8(x: Float32Array, n: number): { q: Int16Array; d: Float32Array; s: Float32Array; q8: Int8Array; sums: Int32Array; records: { d: Float32Array; s: Float32Array; sums: Int32Array }[] } {
    const K = x.length / n, B = K / 32, tiles = Math.ceil(n / 4);
    return this.frame(() => {
      const xp = this.input(x), xq = this.alloc(this.k.q8Bytes(n, K));
      this.k.quantizeQ8(xp, xq, n, K);
      const dT = this.f32(xq + n * K * 2, tiles * B * 4), sT = this.f32(xq + n * K * 2 + tiles * B * 16, tiles * B * 4);
      const d = new Float32Array(n * B), s = new Float32Array(n * B);
      for (let t = 0; t < n; t++) {
        for (let b = 0; b < B; b++) {   // stored [⌈n/4⌉, B, 4]: a prefill tile's 4 tokens side by side
          d[t * B + b] = dT[((t >> 2) * B + b) * 4 + (t & 3)]!;
          s[t * B + b] = sT[((t >> 2) * B + b) * 4 + (t & 3)]!;
        }
      }
      const c8 = xq + n * K * 2 + tiles * B * 32;   // then the i8 codes [n, K] and the integer Σq (laid out as d)
      const sumT = new Int32Array(this.memory.buffer, c8 + n * K, tiles * B * 4), sums = new Int32Array(n * B);
      for (let t = 0; t < n; t++) for (let b = 0; b < B; b++) sums[t * B + b] = sumT[((t >> 2) * B + b) * 4 + (t & 3)]!;
      // then each token's record: its d, s and Σq again, its blocks side by side
      const rec = c8 + n * K + tiles * B * 16, records = Array.from({ length: n }, (_, t) => ({
        d: this.f32(rec + t * B * 12, B).slice(), s: this.f32(rec + t * B * 12 + B * 4, B).slice(), sums: new Int32Array(this.memory.buffer, rec + t * B * 12 + B * 8, B).slice(),
      }));
      return { q: new Int16Array(this.memory.buffer, xq, n * K).slice(), d, s, q8: new Int8Array(this.memory.buffer, c8, n * K).slice(), sums, records };
    });
  }

  /** Whether activations 'q8' reads format fmt with the integer kernels (else that part runs 'f32'). */
  q8Covers(fmt: FormatCode): boolean {
    return this.k.linearQ8Covers(fmt) !== 0;
  }

  /** Rows `ids` of W decoded to f32 [ids.length, K] (the embedding gather). */
  rows(w: WasmLinear, ids: readonly number[]): Float32Array {
    const K = w.cols;
    return this.frame(() => {
      const out = this.alloc(ids.length * K * 4);
      ids.forEach((id, t) => {
        let base = 0;
        for (const p of w.parts) {
          if (id >= base && id < base + p.rows) {
            const r = id - base;
            this.k.dequantRow(p.fmt, p.ptr + r * p.rowBytes, p.scales ? p.scales + r * p.scaleRowBytes : 0, out + t * K * 4, K);
            break;
          }
          base += p.rows;
        }
      });
      return this.f32(out, ids.length * K).slice();
    });
  }

  /** RMSNorm of rows of width weight.length; weight at address wp. */
  rmsnormAt(xp: number, wp: number, yp: number, rows: number, width: number, eps: number): void {
    this.k.rmsnorm(xp, wp, yp, rows, width, eps);
  }

  rmsnorm(x: Float32Array, wp: number, width: number, eps: number): Float32Array {
    const rows = x.length / width;
    return this.frame(() => {
      const xp = this.input(x);
      this.k.rmsnorm(xp, wp, xp, rows, width, eps);
      return this.f32(xp, x.length).slice();
    });
  }

  /** NeoX RoPE in place at xp [n, heads·D] with cs [n, R/2, 2] (cos, sin) at csp. */
  ropeAt(xp: number, csp: number, n: number, heads: number, D: number, R: number): void {
    this.k.rope(xp, csp, n, heads, D, R);
  }

  siluMulAt(gup: number, outp: number, n: number, I: number): void {
    this.k.siluMul(gup, outp, n, I);
  }

  /** x += y over count f32 at addresses xp, yp. */
  addAt(xp: number, yp: number, count: number): void {
    this.k.addInPlace(xp, yp, count);
  }

  toHalfAt(src: number, dst: number, count: number): void {
    this.k.toHalf(src, dst, count);
  }

  fromHalfAt(src: number, dst: number, count: number): void {
    this.k.fromHalf(src, dst, count);
  }

  /** Causal GQA at q [n, Hq·D] for positions pos0.. over f16 keys/values; out [n, Hq·D]. */
  attentionAt(q: number, keys: number, values: number, out: number, n: number, pos0: number, Hq: number, Hkv: number, D: number): void {
    // per thread: kbuf (D f32), then the scores of a KV head's query heads (group · (pos0 + n) f64)
    const kbytes = align(D * 4), stride = kbytes + align((Hq / Hkv) * (pos0 + n) * 8);
    const scratch = this.alloc(this.threads * stride);
    const args = [q, keys, values, out, n, pos0, Hq, Hkv, D, scratch, scratch + kbytes];
    this.splitHeads('attention', args, Hkv, [9, 10], stride);
  }

  /** Causal GQA as attentionAt, over a q8_0 cache (./asm/kv-q8.ts). */
  attentionQ8At(q: number, keys: Q8Blocks, values: Q8Blocks, out: number, n: number, pos0: number, Hq: number, Hkv: number, D: number): void {
    const kbytes = align(D * 4), stride = 2 * kbytes + align((pos0 + n) * 8);
    const scratch = this.alloc(this.threads * stride), vbuf = scratch + kbytes, scores = scratch + 2 * kbytes;
    const args = [q, keys.quants, keys.scales, values.quants, values.scales, out, n, pos0, Hq, Hkv, D, scratch, vbuf, scores];
    this.splitHeads('attentionQ8_0', args, Hkv, [11, 12, 13], stride);
  }

  /**
   * A kernel over heads (`args`, then a head range: attention's KV heads, the delta rule's value heads)
   * over [0, heads): split across the pool where there is one and a head for each thread. The caller's
   * share uses the args as given (thread 0's scratch).
   */
  private splitHeads(kernel: SplitKernel, args: number[], heads: number, scratchArgs: number[], stride: number): void {
    const fn = this.k[kernel] as (...a: number[]) => void;
    const own = (g0: number, g1: number): void => fn(...args, g0, g1);
    if (this.pool && heads >= this.threads) {
      this.pool.runSplit(kernel, args, heads, scratchArgs, stride, own);
      this.splitJobs++;
    } else own(0, heads);
  }

  /** rows heads of D f32 at src to q8_0 blocks at dst (⌈D/32⌉ blocks a head). */
  quantizeQ8At(src: number, dst: Q8Blocks, rows: number, D: number): void {
    this.k.quantizeQ8_0(src, dst.quants, dst.scales, rows, D);
  }

  /** rows heads of q8_0 blocks at src back to f32 [rows, D] at dst. */
  dequantQ8At(src: Q8Blocks, rows: number, D: number, dst: number): void {
    this.k.dequantQ8_0(src.quants, src.scales, rows, D, dst);
  }

  /**
   * Causal conv1d + SiLU over n tokens, continuing the conv state at `state` [K−1, C]: x the first C
   * columns of rows of xStride floats; wT the taps [K, C]; y [n, C].
   */
  convSiluAt(x: number, xStride: number, n: number, wT: number, state: number, C: number, K: number, y: number): void {
    this.k.convSilu(x, xStride, n, wT, state, C, K, y);
  }

  /** β = σ(b), g = A · softplus(a + dt_bias) from ba [n, 2·n_v]; g, beta [n, n_v]. */
  deltaGatesAt(ba: number, A: number, dtBias: number, n: number, nv: number, g: number, beta: number): void {
    this.k.deltaGates(ba, A, dtBias, n, nv, g, beta);
  }

  /** In place: heads vectors of dim per row (rows of stride floats) · scale / √(Σx² + 1e-6). */
  l2normHeadsAt(x: number, stride: number, n: number, heads: number, dim: number, scale: number): void {
    this.k.l2normHeads(x, stride, n, heads, dim, scale);
  }

  /**
   * The gated delta rule over conv [n, C] (q̂ | k̂ | v), gates g, beta [n, n_v], state S [n_v, d_k, d_v];
   * out [n, n_v·d_v]. The value heads are split across the pool (each head's state is its own).
   */
  gatedDeltaRuleAt(conv: number, g: number, beta: number, S: number, out: number, n: number, d: WasmDeltaShape): void {
    const C = 2 * d.numKeyHeads * d.keyDim + d.numValueHeads * d.valueDim;
    const args = [conv, C, g, beta, S, out, n, d.numKeyHeads, d.numValueHeads, d.keyDim, d.valueDim, d.tiled ? 1 : 0];
    this.splitHeads('gatedDeltaRule', args, d.numValueHeads, [], 0);
  }

  /** y = rmsnorm(o) · w · silu(z) per value head of dv; o, y [n, nv·dv]; z rows of zStride floats. */
  gatedRmsNormAt(o: number, z: number, zStride: number, w: number, y: number, n: number, nv: number, dv: number, eps: number): void {
    this.k.gatedRmsNorm(o, z, zStride, w, y, n, nv, dv, eps);
  }

  /** x ← x · σ(gate) over count f32. */
  sigmoidGateAt(x: number, gate: number, count: number): void {
    this.k.sigmoidGate(x, gate, count);
  }
}

function align(p: number): number {
  return Math.ceil(p / 16) * 16;
}
