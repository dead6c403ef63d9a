// Start-up tuning: time the adapter class's candidate decode matvec layouts and prefill layouts
// (src/gpu/tuning.ts) on the device, on a synthetic weight of each format the model uses, and keep the
// fastest whose result is right. A candidate whose output differs from the CPU's (say, a subgroup smaller
// than assumed) is dropped, never used. The choice is cached per adapter and path in memory and across
// loads (localStorage on a page, IndexedDB in the engine's Web Worker).
import { openDB, type IDBPDatabase } from 'idb';
import { matmul } from '../model/reference/ops.ts';
import { quantizeGgml } from '../model/formats/gguf/ggml-quantize.ts';
import { f32ToF16Bits, fromFloat32 } from '../model/tensor-utils.ts';
import type { Linear } from '../model/types.ts';
import { destroyLinear, uploadLinear } from './gpu-weights.ts';
import { Epilogue, linearOps } from './kernels/linear/linear.ts';
import { destroyOps, encodeOps, type Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';
import {
  attentionSplitFor, defaultTuning, topkLayoutFor, deviceTraits, layoutKey, LINEAR_FORMATS, matmulCandidates, matmulThreads, matvecCandidates, tileKey,
  type LinearFormat, type MatmulLayout, type MatvecLayout, type Tuning,
} from './tuning.ts';

/** One measured candidate, for the bench and for people. */
export interface TunedCandidate {
  format: LinearFormat;
  kind: 'matvec' | 'matmul';   // decode matvec layout or prefill tile
  layout: string;              // layoutKey / tileKey
  microseconds: number;        // fastest round per call; Infinity when its result was wrong
}

export interface AutotuneResult {
  tuning: Tuning;
  measured: TunedCandidate[];  // empty when the choice came from the cache
  fromCache: boolean;
}

const memo = new Map<string, Tuning>();
// v2: the ggml formats gained super-block matvec candidates; choices stored before never timed them.
// v3: dense weights gained 8-rows-a-group candidates (and the super-block kernel now serves every ggml
// block type, on the choice timed on Q4_K).
const STORAGE_PREFIX = 'pooled.tuning.v3:';

/** What identifies an adapter and path for the cache: its self-description, the f16 path, subgroups. */
export function tuningKey(device: GPUDevice, useF16: boolean): string {
  const info = ((device as unknown as { adapterInfo?: Partial<GPUAdapterInfo> }).adapterInfo ?? {}) as Partial<GPUAdapterInfo>;
  const sg = device.features.has('subgroups');
  return [info.vendor, info.architecture, info.device, info.description, useF16 ? 'f16' : 'f32', sg ? 'sg' : 'nosg'].join('|');
}

/**
 * Where a choice outlives the page: localStorage on a page, IndexedDB in a Web Worker (which has no
 * localStorage), nothing in Node. Every access may fail (opaque origins, private modes): then the
 * in-memory choice holds for this page.
 */
const persisted = {
  async get(key: string): Promise<string | undefined> {
    try {
      if (typeof localStorage !== 'undefined') return localStorage.getItem(STORAGE_PREFIX + key) ?? undefined;
      if (typeof indexedDB === 'undefined') return undefined;
      const db = await tuningDb();
      return (await db.get('tuning', key)) as string | undefined;
    } catch {
      return undefined;
    }
  },
  async set(key: string, value: string): Promise<void> {
    try {
      if (typeof localStorage !== 'undefined') localStorage.setItem(STORAGE_PREFIX + key, value);
      else if (typeof indexedDB !== 'undefined') await (await tuningDb()).put('tuning', value, key);
    } catch {
      // storage full or denied
    }
  },
};

function tuningDb(): Promise<IDBPDatabase> {
  return openDB('pooled-tuning', 1, { upgrade: (db) => { db.createObjectStore('tuning'); } });
}

function isLayout(v: unknown): v is MatvecLayout {
  const l = v as MatvecLayout;
  return typeof l === 'object' && l !== null && Number.isInteger(l.WG) && l.WG >= 1 && l.WG <= 1024
    && (l.WG & (l.WG - 1)) === 0 && Number.isInteger(l.LANES) && l.LANES >= 1 && l.WG % l.LANES === 0
    && (l.LANES & (l.LANES - 1)) === 0 && Number.isInteger(l.ROWS) && l.ROWS >= 2 && l.ROWS <= 8 && l.ROWS % 2 === 0
    && typeof l.subgroups === 'boolean' && (l.superblock === undefined || typeof l.superblock === 'boolean');
}

function isTile(v: unknown): v is MatmulLayout {
  const t = v as MatmulLayout;
  const pow2 = (n: number): boolean => Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
  if (typeof t !== 'object' || t === null) return false;
  if (t.kind === 'rows') {
    return pow2(t.WG) && t.WG <= 256 && [2, 4, 6, 8].includes(t.R) && Number.isInteger(t.TT) && t.TT >= 1 && t.TT <= 16
      && typeof t.subgroups === 'boolean' && (!t.subgroups || t.WG >= 4);
  }
  return t.kind === 'tiles' && pow2(t.BM) && pow2(t.BN) && pow2(t.TM) && pow2(t.TN)
    && (t.BM <= 32 || t.BM === 64) && t.BN >= 2 && t.BN <= 256 && t.TM <= 16 && t.TN <= 8 && t.BM % t.TM === 0 && t.BN % t.TN === 0;
}

async function readStored(key: string, device: GPUDevice): Promise<Tuning | undefined> {
  const raw = await persisted.get(key);
  if (!raw) return undefined;
  try {
    const t = JSON.parse(raw) as Tuning;
    const base = defaultTuning(device);
    const sg = device.features.has('subgroups');
    const maxThreads = device.limits.maxComputeInvocationsPerWorkgroup;
    const matvec = { ...base.matvec };
    const matmul = { ...base.matmul };
    // Formats a stored choice lacks (it was measured for other formats) keep the class's first candidate.
    for (const f of LINEAR_FORMATS) {
      const mv = t.matvec?.[f];
      const mm = t.matmul?.[f];
      if (mv !== undefined) {
        if (!isLayout(mv) || (mv.subgroups && !sg)) return undefined;
        matvec[f] = mv;
      }
      if (mm !== undefined) {
        if (!isTile(mm) || matmulThreads(mm) > maxThreads || (mm.kind === 'rows' && mm.subgroups && !sg)) return undefined;
        matmul[f] = mm;
      }
    }
    const topk = topkLayoutFor(base.adapterClass, deviceTraits(device).subgroupMinSize);
    return { adapterClass: base.adapterClass, matvec, matmul, attention: attentionSplitFor(base.adapterClass), topk };
  } catch {
    return undefined;
  }
}

/** A deterministic synthetic weight of the format: q4 codes and scales, Q4_K blocks, or BF16 values. */
function synthetic(format: LinearFormat, rows: number, cols: number): Linear {
  let s = 0x9e3779b9;
  const next = (): number => {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  if (format === 'q4') {
    const q = new Uint32Array((rows * cols) / 8);
    for (let i = 0; i < q.length; i++) {
      let w = 0;
      for (let j = 0; j < 8; j++) w |= Math.floor(next() * 15) << (4 * j);
      q[i] = w >>> 0;
    }
    const scales = new Uint16Array((rows * cols) / 32).map(() => f32ToF16Bits(0.01 + 0.02 * next()));
    return {
      kind: 'q4f16_1', rows, cols,
      qweight: { name: 'tune.q_weight', dtype: 'U32', shape: [rows, cols / 8], bytes: new Uint8Array(q.buffer) },
      scales: { name: 'tune.q_scale', dtype: 'F16', shape: [rows, cols / 32], bytes: new Uint8Array(scales.buffer) },
    };
  }
  const v = Float32Array.from({ length: rows * cols }, () => next() - 0.5);
  if (format === 'ggml') {
    return { kind: 'ggml', rows, cols, segments: [{ name: 'tune.weight', type: 'Q4_K', rows, bytes: quantizeGgml('Q4_K', v, rows, cols) }] };
  }
  return { kind: 'dense', rows, cols, weight: fromFloat32('tune.weight', v, [rows, cols], 'BF16') };
}

/** Always correct: a workgroup-memory reduction. Used when no candidate gave the right result. */
const SAFE_LAYOUT: MatvecLayout = { WG: 64, LANES: 64, ROWS: 2, subgroups: false };

/** Timing rounds: candidates are timed round-robin and keep their fastest round (noise only adds). */
const ROUNDS = 3;

/**
 * The synthetic problems: a decode matvec [1024, 1024] and a 16-token prefill matmul [256, 1024], small
 * enough for software adapters (a few ms each there) and repeated per sample to about 20 ms.
 */
const PROBLEMS = { matvec: { rows: 1024, cols: 1024, n: 1 }, matmul: { rows: 256, cols: 1024, n: 16 } } as const;

type Kind = keyof typeof PROBLEMS;

interface Trial {
  tuning: Tuning;
  ops: Op[];
  best: number;                // ms per call, Infinity until timed (or when wrong)
}

interface Scratch { step: GPUBuffer; x: GPUBuffer; y: GPUBuffer; read: GPUBuffer }

async function submitTimed(device: GPUDevice, ops: readonly Op[], n: number, reps: number): Promise<number> {
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  for (let i = 0; i < reps; i++) encodeOps(pass, ops, n);
  pass.end();
  const t0 = performance.now();
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
  return (performance.now() - t0) / reps;
}

/** Run a candidate once (compiling it), then compare its y with the CPU's; false when it is wrong. */
async function verify(device: GPUDevice, trial: Trial, n: number, expect: Float32Array, s: Scratch): Promise<boolean> {
  device.pushErrorScope('validation');
  await submitTimed(device, trial.ops, n, 1);
  if (await device.popErrorScope()) return false;
  trial.best = await submitTimed(device, trial.ops, n, 1);
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(s.y, 0, s.read, 0, expect.length * 4);
  device.queue.submit([enc.finish()]);
  await s.read.mapAsync(GPUMapMode.READ, 0, expect.length * 4);
  const got = new Float32Array(s.read.getMappedRange(0, expect.length * 4).slice(0));
  s.read.unmap();
  let maxDiff = 0;
  let maxRef = 1;
  for (let i = 0; i < expect.length; i++) {
    maxDiff = Math.max(maxDiff, Number.isFinite(got[i]!) ? Math.abs(got[i]! - expect[i]!) : Infinity);
    maxRef = Math.max(maxRef, Math.abs(expect[i]!));
  }
  return maxDiff / maxRef < 1e-5;
}

/** Verify every trial, time the correct ones round-robin; returns the fastest (or undefined). */
async function race(device: GPUDevice, trials: Trial[], n: number, expect: Float32Array, s: Scratch): Promise<Trial | undefined> {
  const good: Trial[] = [];
  for (const t of trials) {
    if (await verify(device, t, n, expect, s)) good.push(t);
    else t.best = Infinity;
  }
  if (good.length === 0) return undefined;
  const reps = Math.max(1, Math.min(32, Math.round(20 / Math.max(0.05, Math.min(...good.map((t) => t.best))))));
  for (const t of good) t.best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    for (const t of good) t.best = Math.min(t.best, await submitTimed(device, t.ops, n, reps));   // ~20 ms a sample
  }
  return good.reduce((a, b) => (b.best < a.best ? b : a));
}

export interface AutotuneOptions {
  /** Explicit matvec candidates (tests): bypass the cache and the class's list. */
  candidates?: MatvecLayout[];
  /** Time the prefill tiles too (default true). */
  matmul?: boolean;
}

/**
 * Measure the device's candidate layouts (decode matvec and prefill tile) for each format and return the
 * fastest correct ones (for a format not measured, the class's first). Cached per adapter and path.
 */
export async function autotune(cache: PipelineCache, formats: readonly LinearFormat[] = ['q4', 'dense'], opts: AutotuneOptions = {}): Promise<AutotuneResult> {
  const { device, useF16 } = cache;
  const key = `${tuningKey(device, useF16)}|${[...formats].sort().join(',')}`;
  const cached = !opts.candidates;
  const known = cached ? memo.get(key) ?? await readStored(key, device) : undefined;
  if (known) {
    memo.set(key, known);
    return { tuning: known, measured: [], fromCache: true };
  }
  const traits = deviceTraits(device);
  let tuning = defaultTuning(device);
  const measured: TunedCandidate[] = [];
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const most = Math.max(...Object.values(PROBLEMS).map((p) => p.rows * p.n));
  const cols = PROBLEMS.matvec.cols;
  const x = Float32Array.from({ length: PROBLEMS.matmul.n * cols }, (_, i) => Math.sin(i * 0.37));
  const bufs: Scratch = {
    step: device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST }),
    x: device.createBuffer({ size: x.byteLength, usage }),
    y: device.createBuffer({ size: most * 4, usage }),
    read: device.createBuffer({ size: most * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
  };
  device.queue.writeBuffer(bufs.x, 0, x);
  const kinds: Kind[] = opts.matmul === false ? ['matvec'] : ['matvec', 'matmul'];
  try {
    for (const format of formats) {
      for (const kind of kinds) {
        const p = PROBLEMS[kind];
        device.queue.writeBuffer(bufs.step, 0, new Uint32Array([p.n, 0, 0, 0]));
        const w = synthetic(format, p.rows, p.cols);
        const expect = matmul(w, x.subarray(0, p.n * p.cols), p.n);
        const g = uploadLinear(device, w, device.limits.maxStorageBufferBindingSize);
        const variants: Tuning[] = kind === 'matvec'
          ? (opts.candidates ?? matvecCandidates(traits, format)).map((l) => ({ ...tuning, matvec: { ...tuning.matvec, [format]: l } }))
          : matmulCandidates(traits).map((l) => ({ ...tuning, matmul: { ...tuning.matmul, [format]: l } }));
        const trials: Trial[] = variants.map((t) => ({
          tuning: t, best: Infinity,
          ops: linearOps(cache.withTuning(t), g, { step: bufs.step, x: bufs.x, y: bufs.y, outStride: p.rows, epilogue: Epilogue.STORE }),
        }));
        try {
          const best = await race(device, trials, p.n, expect, bufs);
          for (const t of trials) {
            measured.push(kind === 'matvec'
              ? { format, kind, layout: layoutKey(t.tuning.matvec[format]), microseconds: t.best * 1000 }
              : { format, kind, layout: tileKey(t.tuning.matmul[format]), microseconds: t.best * 1000 });
          }
          if (best) tuning = kind === 'matvec'
            ? { ...tuning, matvec: { ...tuning.matvec, [format]: best.tuning.matvec[format] } }
            : { ...tuning, matmul: { ...tuning.matmul, [format]: best.tuning.matmul[format] } };
          else if (kind === 'matvec') tuning = { ...tuning, matvec: { ...tuning.matvec, [format]: SAFE_LAYOUT } };
        } finally {
          trials.forEach((t) => destroyOps(t.ops));
          destroyLinear(g);
        }
      }
    }
  } finally {
    Object.values(bufs).forEach((b) => b.destroy());
  }
  if (!cached) return { tuning, measured, fromCache: false };
  memo.set(key, tuning);
  await persisted.set(key, JSON.stringify({
    matvec: tuning.matvec, matmul: tuning.matmul,
    measured: measured.map((m) => `${m.format} ${m.kind} ${m.layout} ${m.microseconds.toFixed(0)}µs`),
  }));
  return { tuning, measured, fromCache: false };
}
