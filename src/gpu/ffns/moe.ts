// The sparse MLP on the device, routing on the device and no read-back (HF Qwen3MoeSparseMoeBlock; the
// reference: src/model/reference/ffns/moe.ts, ../../model/reference/moe.ts), reading act.xn:
//   router linear   xn -> logits [n, E]
//   moe_route       logits -> routing buffer: each token's k experts (ascending id) and weights
//   moe_group       (prefill only) the pairs grouped by expert
//   experts gate|up xn -> act [n·k, I_e]   silu(gate)·up, each pair on its expert's rows only
//   experts down    act -> ye [n·k, H]
//   moe_combine     x[t] += Σ_j w_j · ye[t·k + j]
// (gate and up of different formats: gate|up is two expert linears into gu [n·k, 2·I_e] and silu_mul.)
// Qwen3.5 MoE adds the shared expert (gate|up, down, its gate logit) before a combine that adds
// σ(gate) · shared to the routed sum.
import { EngineUsageError } from '../../model/engine-errors.ts';
import type { ModelConfig, MoeConfig, MoeFfnWeights, MoeMlpWeights, SharedExpertWeights } from '../../model/types.ts';
import { uploadExperts, sameExpertFormat, type GpuExperts } from '../gpu-experts.ts';
import { uploadLinear, type GpuLinear } from '../gpu-weights.ts';
import { expertOps } from '../kernels/moe/expert-linear.ts';
import { Epilogue, linearOps } from '../kernels/linear/linear.ts';
import { MOE_MAX_EXPERTS, MOE_MAX_TOP_K, moeCombineOp, moeCombineSharedOp, moeGroupOp, moeParams, moeRouteOp, routeWords, type MoeShape } from '../kernels/moe/moe.ts';
import { GpuResourceError, UnsupportedWeightError } from '../errors.ts';
import { siluMulOp } from '../kernels/common/silu-mul.ts';
import type { GpuFfnRow, MoeActivations } from '../layer-contract.ts';
import type { Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';
import type { Readbacks } from '../readback.ts';


/** A layer's sparse MLP as the MoE buffers and checks see it. */
export interface MoeLayer { index: number; moe: MoeMlpWeights }

export const moeFfn: GpuFfnRow<MoeFfnWeights> = {
  linears: (f) => {
    const { moe: m, shared: s } = f;
    return [m.router, m.gate, m.up, m.down, ...(s ? [s.gateUp, s.down, s.gate] : [])];
  },
  check(cfg, f, index) {
    if (!cfg.moe) throw new EngineUsageError('createWebGPUEngine: MoE layers in a model whose config has no moe section');
    checkMoeLayers(cfg, [{ index, moe: f.moe }]);
  },
  upload({ device, cache, cfg, act, maxBindingBytes, index }, f) {
    if (!act.moe) throw new Error('engine: an MoE layer but no MoE activations were made');
    const target: MoeMlpTarget = { step: act.step, xn: act.xn, x: act.x, moe: act.moe, layer: index, ...(f.shared ? { shared: f.shared } : {}) };
    return uploadMoeMlp(device, cache, cfg.hiddenSize, f.moe, target, maxBindingBytes);
  },
};

/**
 * What the MoE kernels cannot run, refused by name before the engine asks for a device: more experts or
 * a larger top-k than the routing kernels hold, sizes the vec4 loads cannot take, expert weights in a
 * format with no expert kernels (q4f16_1: MLC has no Qwen3 MoE build) or mixed within one part.
 */
export function checkMoeLayers(cfg: ModelConfig, layers: readonly MoeLayer[]): void {
  const m = cfg.moe;
  if (!m || layers.length === 0) return;
  const E = m.numExperts, k = m.numExpertsPerTok;
  if (E > MOE_MAX_EXPERTS || k > MOE_MAX_TOP_K || k < 1 || k > E) {
    throw new UnsupportedWeightError(`Qwen3 MoE with ${E} experts, top-${k}: the WebGPU engine's routing takes up to ${MOE_MAX_EXPERTS} experts and top-${MOE_MAX_TOP_K}`);
  }
  if (m.moeIntermediateSize % 4 !== 0 || cfg.hiddenSize % 4 !== 0) {
    throw new UnsupportedWeightError(`Qwen3 MoE: moe_intermediate_size ${m.moeIntermediateSize} and hidden_size ${cfg.hiddenSize} must be multiples of 4 on the WebGPU engine`);
  }
  for (const l of layers) {
    for (const part of [l.moe.gate, l.moe.up, l.moe.down]) sameExpertFormat([part]);   // throws by name
  }
}

/**
 * The shared MoE buffers for `maxBatch` tokens a step, for these MoE layers (the engine's config gives E,
 * k, I_e and norm_topk_prob; every layer must agree, checked at upload).
 */
export function createMoeActivations(
  device: GPUDevice, m: MoeConfig, hidden: number, maxBatch: number, layers: readonly MoeLayer[],
): MoeActivations {
  const k = m.numExpertsPerTok;
  const shape: MoeShape = { experts: m.numExperts, topK: k, normTopkProb: m.normTopkProb, maxPairs: maxBatch * k, hidden };
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const buf = (label: string, words: number): GPUBuffer => device.createBuffer({ label, size: Math.max(16, Math.ceil(words / 4) * 16), usage: storage });
  const I = m.moeIntermediateSize;
  const unfused = layers.some((l) => !sameExpertFormat([l.moe.gate, l.moe.up]));
  const params = moeParams(device, shape);   // checks E and k against the kernels' limits first
  return {
    shape, intermediate: I, params,
    logits: buf('moe router logits', maxBatch * m.numExperts),
    route: buf('moe routing', routeWords(shape)),
    act: buf('moe act', shape.maxPairs * I),
    gu: unfused ? buf('moe gate|up', shape.maxPairs * 2 * I) : undefined,
    ye: buf('moe expert outputs', shape.maxPairs * hidden),
    bytesRead: buf('moe expert bytes read', Math.max(1, layers.length) * m.numExperts),
    layerSlots: new Map(layers.map((l, i) => [l.index, i])),
    shared: m.sharedExpertIntermediateSize
      ? {
          intermediate: m.sharedExpertIntermediateSize, act: buf('shared expert act', maxBatch * m.sharedExpertIntermediateSize),
          out: buf('shared expert out', maxBatch * hidden), gate: buf('shared expert gate', maxBatch),
        }
      : undefined,
  };
}

export function destroyMoeActivations(a: MoeActivations): void {
  [a.logits, a.route, a.act, a.ye, a.bytesRead, a.params].forEach((b) => b.destroy());
  a.gu?.destroy();
  if (a.shared) [a.shared.act, a.shared.out, a.shared.gate].forEach((b) => b.destroy());
}

/**
 * The experts' byte counters (MoeActivations.bytesRead) read back in one submit: layer index -> [E]
 * bytes per MoE layer held; `reset` clears them in the same submit.
 */
export async function readExpertBytes(device: GPUDevice, reads: Readbacks, moe: MoeActivations, reset: boolean): Promise<Map<number, Uint32Array>> {
  const out = new Map<number, Uint32Array>();
  const E = moe.shape.experts;
  const bytes = moe.layerSlots.size * E * 4;
  const staging = reads.staging(bytes);
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(moe.bytesRead, 0, staging, 0, bytes);
  if (reset) encoder.clearBuffer(moe.bytesRead, 0, bytes);
  const all = new Uint32Array(await reads.submit(encoder, staging, bytes, 0));
  for (const [layer, slot] of moe.layerSlots) out.set(layer, all.slice(slot * E, (slot + 1) * E));
  return out;
}

/** Where the sparse MLP reads and writes: xn [n, H] its input, x [n, H] the residual stream it adds to. */
export interface MoeMlpTarget {
  step: GPUBuffer;
  xn: GPUBuffer;
  x: GPUBuffer;
  moe: MoeActivations;
  layer: number;               // the layer's index (its row of `bytesRead`, its labels)
  shared?: SharedExpertWeights; // Qwen3.5 MoE: the gated shared expert, added with the routed sum
}

/** The sparse MLP of one layer (ops 7–12 above) and the device weights it made. */
export function uploadMoeMlp(
  device: GPUDevice, cache: PipelineCache, hidden: number, m: MoeMlpWeights, t: MoeMlpTarget, maxBindingBytes: number,
): { linears: GpuLinear[]; ops: Op[] } {
  const { step, moe } = t;
  const H = hidden;
  const E = m.numExperts;
  const I = m.intermediate;
  if (I % 4 !== 0 || H % 4 !== 0) throw new RangeError(`layer ${t.layer}: MoE expert sizes must be multiples of 4 (I_e ${I}, H ${H})`);
  if (E !== moe.shape.experts || m.topK !== moe.shape.topK || I !== moe.intermediate || m.normTopkProb !== moe.shape.normTopkProb) {
    throw new RangeError(`layer ${t.layer}: MoE shape (${E} experts, top-${m.topK}, I_e ${I}, norm ${m.normTopkProb}) differs from the engine's (${moe.shape.experts}, top-${moe.shape.topK}, ${moe.intermediate}, ${moe.shape.normTopkProb})`);
  }
  const slot = moe.layerSlots.get(t.layer);
  if (slot === undefined) throw new Error(`engine: MoE layer ${t.layer} has no row in the bytes-read counter`);
  const name = `layer ${t.layer}`;
  const router = uploadLinear(device, m.router, maxBindingBytes);
  const b = { step, logits: moe.logits, route: moe.route, ye: moe.ye, x: t.x, params: moe.params };
  const base = { step, route: moe.route, bytesRead: moe.bytesRead, topK: m.topK, maxPairs: moe.shape.maxPairs, counterBase: slot * E };
  const ops: Op[] = [];
  ops.push(...linearOps(cache, router, { step, x: t.xn, y: moe.logits, outStride: E, epilogue: Epilogue.STORE }));
  ops.push(moeRouteOp(cache, b, name), moeGroupOp(cache, b, name));
  const experts: GpuExperts[] = [];
  if (sameExpertFormat([m.gate, m.up])) {
    const gateUp = uploadExperts(device, [m.gate, m.up], E, maxBindingBytes);
    experts.push(gateUp);
    ops.push(...expertOps(cache, gateUp, { ...base, x: t.xn, y: moe.act, outStride: I, epilogue: Epilogue.SILU_GATE_UP, xDiv: m.topK }));
  } else {
    if (!moe.gu) throw new Error('engine: MoE gate and up differ in format but no [T·k, 2·I_e] buffer was made');
    const gate = uploadExperts(device, [m.gate], E, maxBindingBytes);
    const up = uploadExperts(device, [m.up], E, maxBindingBytes);
    experts.push(gate, up);
    // gate into columns [0, I) of gu, up into [I, 2I): two expert linears writing the same rows
    ops.push(...expertOps(cache, gate, { ...base, x: t.xn, y: moe.gu, outStride: 2 * I, epilogue: Epilogue.STORE, xDiv: m.topK }));
    ops.push(...expertOps(cache, up, { ...base, x: t.xn, y: moe.gu, outStride: 2 * I, epilogue: Epilogue.STORE, xDiv: m.topK, rowOffset: I }));
    ops.push(siluMulOp(cache, { step, gu: moe.gu, out: moe.act }, I, `${name} experts silu_mul`, m.topK));
  }
  const down = uploadExperts(device, [m.down], E, maxBindingBytes);
  experts.push(down);
  ops.push(...expertOps(cache, down, { ...base, x: moe.act, y: moe.ye, outStride: H, epilogue: Epilogue.STORE, xDiv: 1 }));
  if (!t.shared) {
    ops.push(moeCombineOp(cache, b, moe.shape, name));
    return { linears: [router, ...experts], ops };
  }
  const sh = shared(device, cache, t, H, maxBindingBytes);
  ops.push(...sh.ops, moeCombineSharedOp(cache, { ...b, shared: moe.shared!.out, sgate: moe.shared!.gate }, moe.shape, name));
  return { linears: [router, ...experts, ...sh.linears], ops };
}

/** The shared expert's ops: gate|up with silu·mul, down, and its gate logit (σ is applied in the combine). */
function shared(device: GPUDevice, cache: PipelineCache, t: MoeMlpTarget, H: number, maxBindingBytes: number): { linears: GpuLinear[]; ops: Op[] } {
  const s = t.shared!;
  const a = t.moe.shared;
  if (!a || a.intermediate !== s.intermediate) throw new RangeError(`layer ${t.layer}: a shared expert of I_s ${s.intermediate} but the engine's buffers hold ${a?.intermediate ?? 'none'}`);
  const gateUp = uploadLinear(device, s.gateUp, maxBindingBytes);
  if (gateUp.chunks.length !== 1) throw new GpuResourceError(`layer ${t.layer}: the shared expert's gate|up (${gateUp.bytes} bytes) must fit one binding of ${maxBindingBytes} bytes`);
  const down = uploadLinear(device, s.down, maxBindingBytes);
  const gate = uploadLinear(device, s.gate, maxBindingBytes);
  const { step, xn } = t;
  return {
    linears: [gateUp, down, gate],
    ops: [
      ...linearOps(cache, gateUp, { step, x: xn, y: a.act, outStride: s.intermediate, epilogue: Epilogue.SILU_GATE_UP }),
      ...linearOps(cache, down, { step, x: a.act, y: a.out, outStride: H, epilogue: Epilogue.STORE }),
      ...linearOps(cache, gate, { step, x: xn, y: a.gate, outStride: 1, epilogue: Epilogue.STORE }),
    ],
  };
}
