// The MoE routing kernels (shaders/moe_route.wgsl, moe_group.wgsl, moe_combine.wgsl,
// moe_combine_shared.wgsl): softmax + top-k per token into the routing buffer, prefill's grouping of
// tokens by expert, and the weighted sum of the experts' outputs (Qwen3.5: plus the gated shared expert)
// into the residual stream. The experts themselves run on the linear kernels' expert
// variants (./experts.ts, ./expert-linear.ts).
import combineSource from '../../../../shaders/moe_combine.wgsl?raw';
import combineSharedSource from '../../../../shaders/moe_combine_shared.wgsl?raw';
import routedSum from '../../../../shaders/lib/moe_routed_sum.wgsl?raw';
import groupSource from '../../../../shaders/moe_group.wgsl?raw';
import routeSource from '../../../../shaders/moe_route.wgsl?raw';
import { defineKernel, read, rw, STEP, uniformBuffer, uniformStruct } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

/** Largest expert count and top-k the routing kernels take (their workgroup arrays). */
export const MOE_MAX_EXPERTS = 512;
export const MOE_MAX_TOP_K = 32;

/** The routing shape: E, k, whether the k weights are renormalised, and P = maxBatch·k. */
export const MOE_ROUTE = uniformStruct('MoeRoute', ['num_experts', 'top_k', 'norm_topk', 'max_pairs']);

export const MOE_ROUTE_KERNEL = defineKernel({
  name: 'moe_route',
  source: routeSource,
  bindings: { step: STEP, logits: read('array<f32>'), route: rw('array<u32>'), params: MOE_ROUTE },
});

export const MOE_GROUP = defineKernel({
  name: 'moe_group',
  source: groupSource,
  bindings: { step: STEP, route: rw('array<u32>'), params: MOE_ROUTE },
});

export const MOE_COMBINE = defineKernel({
  name: 'moe_combine',
  source: combineSource,
  libs: [routedSum],
  bindings: { step: STEP, route: read('array<u32>'), ye: read('array<f32>'), x: rw('array<f32>'), params: MOE_ROUTE },
});

export const MOE_COMBINE_SHARED = defineKernel({
  name: 'moe_combine_shared',
  source: combineSharedSource,
  libs: [routedSum],
  bindings: {
    step: STEP, route: read('array<u32>'), ye: read('array<f32>'), sx: read('array<f32>'), sgate: read('array<f32>'),
    x: rw('array<f32>'), params: MOE_ROUTE,
  },
});

export interface MoeShape {
  experts: number;             // E
  topK: number;                // k
  normTopkProb: boolean;
  maxPairs: number;            // maxBatch · k
  hidden: number;              // H
}

/** Words of the routing buffer for a shape: ids, weights, starts [E + 1], groups. */
export function routeWords(s: MoeShape): number {
  return 3 * s.maxPairs + s.experts + 1;
}

export function moeParams(device: GPUDevice, s: MoeShape): GPUBuffer {
  if (s.experts > MOE_MAX_EXPERTS || s.topK > MOE_MAX_TOP_K || s.topK > s.experts || s.topK < 1) {
    throw new RangeError(`MoE with ${s.experts} experts, top-${s.topK}: the routing kernels take up to ${MOE_MAX_EXPERTS} experts and top-${MOE_MAX_TOP_K}`);
  }
  return uniformBuffer(device, MOE_ROUTE, { num_experts: s.experts, top_k: s.topK, norm_topk: s.normTopkProb ? 1 : 0, max_pairs: s.maxPairs });
}

export interface MoeBuffers {
  step: GPUBuffer;
  logits: GPUBuffer;           // [T, E]
  route: GPUBuffer;            // routeWords(shape) u32
  ye: GPUBuffer;               // [T·k, H]
  x: GPUBuffer;                // [T, H]
  params: GPUBuffer;           // moeParams
}

export function moeRouteOp(cache: PipelineCache, b: MoeBuffers, label: string): Op {
  return kernelOp(cache, MOE_ROUTE_KERNEL, {
    label: `${label} route`, consts: {}, buffers: { step: b.step, logits: b.logits, route: b.route, params: b.params }, grid: (n) => [n, 1, 1],
  });
}

/** Prefill only: a single token needs no grouping (its k experts are its pairs), so n = 1 encodes nothing. */
export function moeGroupOp(cache: PipelineCache, b: MoeBuffers, label: string): Op {
  const op = kernelOp(cache, MOE_GROUP, {
    label: `${label} group`, consts: { WG: 64 }, buffers: { step: b.step, route: b.route, params: b.params }, grid: () => [1, 1, 1],
  });
  return { label: op.label, encode: (pass, n) => (n > 1 ? op.encode(pass, n) : 0) };
}

export function moeCombineOp(cache: PipelineCache, b: MoeBuffers, s: MoeShape, label: string): Op {
  const WG = 64;
  return kernelOp(cache, MOE_COMBINE, {
    label: `${label} combine`, consts: { H: s.hidden, WG }, buffers: { step: b.step, route: b.route, ye: b.ye, x: b.x, params: b.params },
    grid: (n) => [Math.ceil(s.hidden / WG), n, 1],
  });
}

/** Qwen3.5 MoE: the routed sum plus σ(gate)·shared expert, added to x in the reference's order. */
export function moeCombineSharedOp(cache: PipelineCache, b: MoeBuffers & { shared: GPUBuffer; sgate: GPUBuffer }, s: MoeShape, label: string): Op {
  const WG = 64;
  return kernelOp(cache, MOE_COMBINE_SHARED, {
    label: `${label} combine (+ shared expert)`, consts: { H: s.hidden, WG },
    buffers: { step: b.step, route: b.route, ye: b.ye, sx: b.shared, sgate: b.sgate, x: b.x, params: b.params },
    grid: (n) => [Math.ceil(s.hidden / WG), n, 1],
  });
}
