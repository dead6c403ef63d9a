// Start-up tuning: time the adapter class's candidate matvec layouts (src/gpu/tuning.ts) on the device,
// on a synthetic weight of each format the model uses, and keep the fastest whose result is right. The
// choice is cached per adapter and path, in memory and (in browsers) in localStorage, so a device pays
// for it once. A candidate whose output differs from the CPU's (say, a subgroup smaller than assumed) is
// dropped, never used.
import { matmul } from '../model/reference/ops.ts';
import { f32ToF16Bits, fromFloat32 } from '../model/tensor-utils.ts';
import type { Linear } from '../model/types.ts';
import { destroyLinear, uploadLinear } from './gpu-weights.ts';
import { Epilogue, linearOps } from './kernels/linear.ts';
import { destroyOps, encodeOps, type Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';
import {
  deviceTraits, layoutKey, matvecCandidates, type LinearFormat, type MatvecLayout, type Tuning,
} from './tuning.ts';

/** One measured candidate, for the bench and for people. */
export interface TunedCandidate {
  format: LinearFormat;
  layout: MatvecLayout;
  microseconds: number;        // median per matvec; Infinity when its result was wrong
}

export interface AutotuneResult {
  tuning: Tuning;
  measured: TunedCandidate[];  // empty when the choice came from the cache
  fromCache: boolean;
}

const memo = new Map<string, Tuning>();
const STORAGE_PREFIX = 'pooled.tuning.v1:';

/** What identifies an adapter and path for the cache: its self-description, the f16 path, subgroups. */
export function tuningKey(device: GPUDevice, useF16: boolean): string {
  const info = ((device as unknown as { adapterInfo?: Partial<GPUAdapterInfo> }).adapterInfo ?? {}) as Partial<GPUAdapterInfo>;
  const sg = device.features.has('subgroups');
  return [info.vendor, info.architecture, info.device, info.description, useF16 ? 'f16' : 'f32', sg ? 'sg' : 'nosg'].join('|');
}

function storage(): Storage | undefined {
  try {
    return typeof localStorage === 'undefined' ? undefined : localStorage;
  } catch {
    return undefined;                    // opaque origins and some workers throw on access
  }
}

function isLayout(v: unknown): v is MatvecLayout {
  const l = v as MatvecLayout;
  return typeof l === 'object' && l !== null && Number.isInteger(l.WG) && l.WG >= 1 && l.WG <= 1024
    && (l.WG & (l.WG - 1)) === 0 && Number.isInteger(l.LANES) && l.LANES >= 1 && l.WG % l.LANES === 0
    && (l.LANES & (l.LANES - 1)) === 0 && Number.isInteger(l.ROWS) && l.ROWS >= 2 && l.ROWS <= 8 && l.ROWS % 2 === 0
    && typeof l.subgroups === 'boolean';
}

function readStored(key: string, device: GPUDevice): Tuning | undefined {
  const raw = storage()?.getItem(STORAGE_PREFIX + key);
  if (!raw) return undefined;
  try {
    const t = JSON.parse(raw) as Tuning;
    const ok = isLayout(t.matvec?.dense) && isLayout(t.matvec?.q4)
      && (!t.matvec.dense.subgroups || device.features.has('subgroups'))
      && (!t.matvec.q4.subgroups || device.features.has('subgroups'));
    return ok ? { adapterClass: deviceTraits(device).adapterClass, matvec: t.matvec } : undefined;
  } catch {
    return undefined;
  }
}

/** A deterministic synthetic weight of the format: q4 codes and scales, or BF16 values. */
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
  return { kind: 'dense', rows, cols, weight: fromFloat32('tune.weight', v, [rows, cols], 'BF16') };
}

/** Always correct: a workgroup-memory reduction. Used when no candidate gave the right result. */
const SAFE_LAYOUT: MatvecLayout = { WG: 64, LANES: 64, ROWS: 2, subgroups: false };

/** Timing rounds: candidates are timed round-robin and keep their fastest round (noise only adds). */
const ROUNDS = 3;

interface Trial {
  layout: MatvecLayout;
  ops: Op[];
  best: number;                // ms per matvec, Infinity until timed (or when wrong)
}

interface Scratch { step: GPUBuffer; x: GPUBuffer; y: GPUBuffer; read: GPUBuffer }

async function submitTimed(device: GPUDevice, ops: readonly Op[], reps: number): Promise<number> {
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  for (let i = 0; i < reps; i++) encodeOps(pass, ops, 1);
  pass.end();
  const t0 = performance.now();
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
  return (performance.now() - t0) / reps;
}

/** Run a candidate once (compiling it) and compare its y with the CPU's; false when it is wrong. */
async function verify(device: GPUDevice, trial: Trial, rows: number, expect: Float32Array, s: Scratch): Promise<boolean> {
  device.pushErrorScope('validation');
  await submitTimed(device, trial.ops, 1);                      // compiles
  if (await device.popErrorScope()) return false;
  trial.best = await submitTimed(device, trial.ops, 1);
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(s.y, 0, s.read, 0, rows * 4);
  device.queue.submit([enc.finish()]);
  await s.read.mapAsync(GPUMapMode.READ);
  const got = new Float32Array(s.read.getMappedRange().slice(0));
  s.read.unmap();
  let maxDiff = 0;
  let maxRef = 1;
  for (let i = 0; i < expect.length; i++) {
    maxDiff = Math.max(maxDiff, Number.isFinite(got[i]!) ? Math.abs(got[i]! - expect[i]!) : Infinity);
    maxRef = Math.max(maxRef, Math.abs(expect[i]!));
  }
  return maxDiff / maxRef < 1e-5;
}

/**
 * Measure the device's candidate layouts for each format and return the fastest correct one (for a
 * format not measured, the first candidate). Cached per adapter and path.
 */
export async function autotune(
  cache: PipelineCache, formats: readonly LinearFormat[] = ['q4', 'dense'], opts: { candidates?: MatvecLayout[] } = {},
): Promise<AutotuneResult> {
  const { device, useF16 } = cache;
  const key = `${tuningKey(device, useF16)}|${[...formats].sort().join(',')}`;
  const cached = !opts.candidates;                  // explicit candidates (tests, benches) bypass the cache
  const known = cached ? memo.get(key) ?? readStored(key, device) : undefined;
  if (known) {
    memo.set(key, known);
    return { tuning: known, measured: [], fromCache: true };
  }
  const traits = deviceTraits(device);
  const candidates = opts.candidates ?? matvecCandidates(traits);
  const chosen: Record<LinearFormat, MatvecLayout> = { dense: candidates[0]!, q4: candidates[0]! };
  const measured: TunedCandidate[] = [];
  const rows = 2048;
  const cols = 1024;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const x = Float32Array.from({ length: cols }, (_, i) => Math.sin(i * 0.37));
  const bufs = {
    step: device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST }),
    x: device.createBuffer({ size: cols * 4, usage }),
    y: device.createBuffer({ size: rows * 4, usage }),
    read: device.createBuffer({ size: rows * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
  };
  device.queue.writeBuffer(bufs.step, 0, new Uint32Array([1, 0, 0, 0]));
  device.queue.writeBuffer(bufs.x, 0, x);
  try {
    for (const format of formats) {
      const w = synthetic(format, rows, cols);
      const expect = matmul(w, x, 1);
      const g = uploadLinear(device, w, device.limits.maxStorageBufferBindingSize);
      const trials: Trial[] = candidates.map((layout) => ({
        layout, best: Infinity,
        ops: linearOps(cache.withTuning({ ...cache.tuning, matvec: { dense: layout, q4: layout } }), g,
          { step: bufs.step, x: bufs.x, y: bufs.y, outStride: rows, epilogue: Epilogue.STORE }),
      }));
      try {
        const good: Trial[] = [];
        for (const t of trials) {
          if (await verify(device, t, rows, expect, bufs)) good.push(t);
          else t.best = Infinity;
        }
        const reps = Math.max(1, Math.min(8, Math.round(20 / Math.max(0.1, Math.min(...good.map((t) => t.best))))));
        for (const t of good) t.best = Infinity;
        for (let r = 0; r < ROUNDS; r++) {
          for (const t of good) t.best = Math.min(t.best, await submitTimed(device, t.ops, reps));   // ~20 ms a sample
        }
        let best: Trial | undefined;
        for (const t of trials) {
          measured.push({ format, layout: t.layout, microseconds: t.best * 1000 });
          if (t.best < (best?.best ?? Infinity)) best = t;
        }
        chosen[format] = best?.layout ?? SAFE_LAYOUT;
      } finally {
        trials.forEach((t) => destroyOps(t.ops));
        destroyLinear(g);
      }
    }
  } finally {
    Object.values(bufs).forEach((b) => b.destroy());
  }
  const tuning: Tuning = { adapterClass: traits.adapterClass, matvec: chosen };
  if (!cached) return { tuning, measured, fromCache: false };
  memo.set(key, tuning);
  try {
    storage()?.setItem(STORAGE_PREFIX + key, JSON.stringify({ matvec: chosen, measured: measured.map((m) => `${m.format} ${layoutKey(m.layout)} ${m.microseconds.toFixed(0)}µs`) }));
  } catch {
    // storage full or denied: the in-memory choice still holds for this page
  }
  return { tuning, measured, fromCache: false };
}
