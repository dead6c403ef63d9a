// What every linear kernel (each structure × weight format, ./linear-kernels.ts) shares: the epilogue codes, the per-chunk uniform,
// what a caller asks of a linear (where x comes from, where y goes, how it is combined) and the plain job
// library its skeleton takes its rows, x and y from (experts.ts swaps it for the routed one).
import jobPlainSource from '../../../../shaders/lib/job_plain.wgsl?raw';
import { uniformStruct } from '../../kernel.ts';

/** shaders/lib/job_plain.wgsl: a plain matrix's rows, x and y, the job library of every linear kernel. */
export const jobPlain = jobPlainSource;

/** How a linear's result is written: the codes are shared with the WGSL as constants of these names. */
export const Epilogue = {
  /** y = x·Wᵀ */
  STORE: 0,
  /** y += x·Wᵀ (the residual stream) */
  ADD_RESIDUAL: 1,
  /** y[r] = silu(g[r])·u[r] for W = gate rows then up rows (out_rows = rows / 2) */
  SILU_GATE_UP: 2,
} as const;

export type Epilogue = (typeof Epilogue)[keyof typeof Epilogue];

/**
 * The per-chunk uniform of every linear kernel: K, y's row stride, the first column of y this chunk of
 * weight rows writes, how many (out_rows: rows, or rows / 2 for SILU_GATE_UP) and the epilogue.
 */
export const CHUNK = uniformStruct('Chunk', ['k', 'out_stride', 'row_offset', 'out_rows', 'epilogue']);

export interface LinearTarget {
  step: GPUBuffer;
  x: GPUBuffer;                // [n, K]
  y: GPUBuffer;                // [n, outStride]
  outStride: number;
  epilogue: Epilogue;
  /** Decode only: read the un-normalised row instead of x and fold its RMSNorm in (shaders/lib/x_rmsnorm.wgsl). */
  foldNorm?: FoldedNorm;
}

/**
 * An RMSNorm folded into the decode matvec that reads its output: at n = 1 the matvec reads `x` (the
 * un-normalised hidden row [K]) and the norm weight, and normalises on the fly, so the rmsnorm dispatch
 * runs for prefill only (src/gpu/layers.ts). Prefill reads the target's x (the rmsnorm's output) as before.
 */
export interface FoldedNorm {
  x: GPUBuffer;                // [K] the norm's input row
  weight: GPUBuffer;           // [K] f32
  eps: number;
  name: string;                // the norm's name, for op labels ("input_layernorm")
}
