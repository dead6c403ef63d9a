// sigmoid_gate (shaders/sigmoid_gate.wgsl): the hybrid's sigmoid gates, in place on y:
//   OUTPUT (gated attention):  y[t, i] ·= σ(g[t, i])
//   SHARED (shared expert):    y[t, i] += σ(g[t, 0]) · x[t, i]
import source from '../../../../shaders/sigmoid_gate.wgsl?raw';
import { defineKernel, read, rw, STEP, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

export const SIGMOID_GATE = defineKernel({
  name: 'sigmoid_gate',
  source,
  bindings: {
    step: STEP,                  // n = tokens
    g: read('array<f32>'),       // [n, GS] gates
    x: read('array<f32>'),       // [n, W] (SHARED; OUTPUT does not read it: bind g again)
    y: rw('array<f32>'),         // [n, W]
  },
});

export const GateMode = { OUTPUT: 0, SHARED: 1 } as const;

const WG = 64;

export function sigmoidGateOp(
  cache: PipelineCache, buffers: BufferSet<typeof SIGMOID_GATE.bindings>, s: { W: number; GS: number; mode: number }, label: string,
): Op {
  return kernelOp(cache, SIGMOID_GATE, {
    label, consts: { W: s.W, GS: s.GS, MODE: s.mode, WG }, buffers, grid: (n) => [Math.ceil(s.W / WG), n, 1],
  });
}
