// gated_delta (shaders/gated_delta.wgsl): the gated delta rule of one Gated DeltaNet layer for every
// token of a step, on its recurrent state [NV, DK, DV] (updated in place). The same dispatch serves a
// decode token and a prefill chunk: each invocation walks the step's tokens in order with its state
// column in registers, so a prompt cut anywhere gives the values of one token at a time.
import source from '../../../../shaders/gated_delta.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const GATED_DELTA = defineKernel({
  name: 'gated_delta',
  source,
  bindings: {
    step: STEP,                  // n = tokens
    conv: read('array<f32>'),    // [n, 2·NK·DK + NV·DV] q | k | v after the conv and SiLU
    ba: read('array<f32>'),      // [n, 2·NV] β logits, then decay inputs
    a: read('array<f32>'),       // [NV] A = −exp(A_log)
    dt_bias: read('array<f32>'), // [NV]
    state: rw('array<f32>'),     // [NV, DK, DV]
    out: rw('array<f32>'),       // [n, NV·DV]
  },
});

/** Key head dim the kernel holds in registers at most (a state column of DK floats per invocation). */
export const MAX_DELTA_KEY_DIM = 256;

export interface DeltaShape {
  NK: number;
  NV: number;
  DK: number;                  // ≤ MAX_DELTA_KEY_DIM
  DV: number;
  tiled: boolean;              // value head j reads key head j mod NK (llama.cpp's order), else j / (NV/NK)
}

/** Threads per workgroup: one per state column, DV columns of a head over ceil(DV / WG) workgroups. */
export function deltaWorkgroup(DV: number): number {
  return DV >= 128 ? 128 : DV >= 64 ? 64 : 32;
}

export function gatedDeltaOp(cache: PipelineCache, buffers: BufferSet<typeof GATED_DELTA.bindings>, s: DeltaShape, label: string): Op {
  if (!(s.DK >= 1 && s.DK <= MAX_DELTA_KEY_DIM)) throw new RangeError(`gated_delta: key head dim ${s.DK}, the kernel takes 1 .. ${MAX_DELTA_KEY_DIM}`);
  if (s.NV % s.NK !== 0) throw new RangeError(`gated_delta: ${s.NV} value heads are not a multiple of ${s.NK} key heads`);
  const WG = deltaWorkgroup(s.DV);
  return kernelOp(cache, GATED_DELTA, {
    label, consts: { NK: s.NK, NV: s.NV, DK: s.DK, DV: s.DV, TILED: s.tiled ? 1 : 0, WG }, buffers,
    grid: () => [s.NV, Math.ceil(s.DV / WG), 1],
  });
}
