// One decoder layer on the device: its weights, its KV cache and its prepared decode/prefill ops.
// The ops of a layer, in order (8 dispatches when no weight is split):
//   1 rmsnorm      x -> xn                    (input_layernorm)
//   2 matvec qkv   xn -> qkv                  [n, (Hq + 2·Hkv)·D]
//   3 qk_norm_rope qkv -> q, K/V cache        (q/k RMSNorm per head, RoPE neox, f16 K/V at pos0..)
//   4 attention    q, cache -> att            [n, Hq·D]
//   5 matvec o     att -> x (+=)              residual fused in the epilogue
//   6 rmsnorm      x -> xn                    (post_attention_layernorm)
//   7 matvec gate|up + silu·mul  xn -> act    [n, I] (unfused: matvec -> gu, then silu_mul, if split)
//   8 matvec down  act -> x (+=)              residual fused in the epilogue
import { ropeInvFreq } from '../model/reference/ops.ts';
import type { LayerWeights, ModelConfig } from '../model/types.ts';
import { GpuResourceError } from './errors.ts';
import { destroyLinear, uploadLinear, uploadNorm, type GpuLinear } from './gpu-weights.ts';
import { attentionOp } from './kernels/attention.ts';
import { Epilogue, linearOps } from './kernels/linear.ts';
import { qkNormRopeOp } from './kernels/qk-norm-rope.ts';
import { rmsnormOp } from './kernels/rmsnorm.ts';
import { siluMulOp } from './kernels/silu-mul.ts';
import { destroyOps, type Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';
import type { HybridActivations } from './hybrid-layers.ts';
import type { LinearState } from './recurrent-snapshots.ts';

/** Activation buffers shared by all layers of an engine, sized for `maxTokens` tokens per step. */
export interface Activations {
  step: GPUBuffer;             // uniform Step { n, pos0 }
  x: GPUBuffer;                // [T, H] residual stream
  xn: GPUBuffer;               // [T, H] normalised
  qkv: GPUBuffer;              // [T, (Hq + 2·Hkv)·D]
  q: GPUBuffer;                // [T, Hq·D]
  att: GPUBuffer;              // [T, Hq·D]
  part: GPUBuffer;             // [Hq, splits, D + 2]: decode attention's partials per key split
  act: GPUBuffer;              // [T, I]
  gu: GPUBuffer | undefined;   // [T, 2·I], only when a gate|up weight is split across buffers
  rope: GPUBuffer;             // [ctx, R/2] (cos, sin) for R rotary dims (D; Qwen3.5: D · partial_rotary_factor)
  hybrid?: HybridActivations;  // Qwen3.5 layers (src/gpu/hybrid-layers.ts)
}

export interface GpuLayer {
  index: number;
  linears: GpuLinear[];
  norms: GPUBuffer[];
  kcache?: GPUBuffer;          // [ctx, Hkv·D/2] u32 (f16 pairs); attention layers
  vcache?: GPUBuffer;
  state?: LinearState;         // Gated DeltaNet layers (src/gpu/hybrid-layers.ts): conv and delta state
  ops: Op[];
  kvLength: number;            // tokens in its KV cache, or steps its recurrent state has taken
}

export function uploadLayer(
  device: GPUDevice, cache: PipelineCache, cfg: ModelConfig, w: LayerWeights, act: Activations,
  ctx: number, maxBindingBytes: number,
): GpuLayer {
  const { hiddenSize: H, numHeads: Hq, numKvHeads: Hkv, headDim: D, intermediateSize: I, rmsNormEps: eps } = cfg;
  const qkv = uploadLinear(device, w.qkv, maxBindingBytes);
  const o = uploadLinear(device, w.o, maxBindingBytes);
  const gateUp = uploadLinear(device, w.gateUp, maxBindingBytes);
  const down = uploadLinear(device, w.down, maxBindingBytes);
  const [inputNorm, qNorm, kNorm, postNorm] = [w.inputNorm, w.qNorm, w.kNorm, w.postNorm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer];
  const { kcache, vcache } = createKvCache(device, w.index, ctx, Hkv * D, maxBindingBytes);

  const step = act.step;
  const heads = { Hq, Hkv, D };
  const name = `layer ${w.index}`;
  const ops: Op[] = [
    rmsnormOp(cache, { step, x: act.x, weight: inputNorm, y: act.xn }, H, eps, `${name} input_layernorm`),
    ...linearOps(cache, qkv, { step, x: act.xn, y: act.qkv, outStride: (Hq + 2 * Hkv) * D, epilogue: Epilogue.STORE }),
    qkNormRopeOp(cache, { step, qkv: act.qkv, qnorm: qNorm, knorm: kNorm, rope: act.rope, q: act.q, kcache, vcache }, heads, eps, `${name} qk_norm_rope`),
    attentionOp(cache, { step, q: act.q, kcache, vcache, out: act.att, part: act.part }, heads, `${name} attention`, cache.tuning.attention),
    ...linearOps(cache, o, { step, x: act.att, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }),
    rmsnormOp(cache, { step, x: act.x, weight: postNorm, y: act.xn }, H, eps, `${name} post_attention_layernorm`),
  ];
  ops.push(...swigluOps(cache, gateUp, down, act, I, name));
  return { index: w.index, linears: [qkv, o, gateUp, down], norms: [inputNorm, qNorm, kNorm, postNorm], kcache, vcache, ops, kvLength: 0 };
}

/** The SwiGLU MLP: gate|up with silu·mul (fused in the matvec epilogue unless the weight is split), down += x. */
export function swigluOps(cache: PipelineCache, gateUp: GpuLinear, down: GpuLinear, act: Activations, I: number, name: string): Op[] {
  const { step } = act;
  const H = down.rows;
  const ops: Op[] = [];
  if (gateUp.chunks.length === 1) {
    ops.push(...linearOps(cache, gateUp, { step, x: act.xn, y: act.act, outStride: I, epilogue: Epilogue.SILU_GATE_UP }));
  } else {
    if (!act.gu) throw new Error('engine: gate|up is split but no [T, 2I] buffer was made');
    ops.push(...linearOps(cache, gateUp, { step, x: act.xn, y: act.gu, outStride: 2 * I, epilogue: Epilogue.STORE }));
    ops.push(siluMulOp(cache, { step, gu: act.gu, out: act.act }, I, `${name} silu_mul`));
  }
  ops.push(...linearOps(cache, down, { step, x: act.act, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }));
  return ops;
}

/** A KV cache pair for an attention layer, checked against the binding limit. */
export function createKvCache(device: GPUDevice, index: number, ctx: number, kvWidth: number, maxBindingBytes: number): { kcache: GPUBuffer; vcache: GPUBuffer } {
  const kvBytes = ctx * kvWidth * 2;
  if (kvBytes > maxBindingBytes) {
    throw new GpuResourceError(`layer ${index}: a KV cache of ${ctx} tokens needs ${kvBytes} bytes per buffer, over the binding limit of ${maxBindingBytes}; choose a smaller ctx`);
  }
  const kvUsage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  return {
    kcache: device.createBuffer({ label: `layer ${index} K cache`, size: kvBytes, usage: kvUsage }),
    vcache: device.createBuffer({ label: `layer ${index} V cache`, size: kvBytes, usage: kvUsage }),
  };
}

export function destroyLayer(l: GpuLayer): void {
  l.linears.forEach(destroyLinear);
  l.norms.forEach((b) => b.destroy());
  l.kcache?.destroy();
  l.vcache?.destroy();
  l.state?.conv.destroy();
  l.state?.delta.destroy();
  destroyOps(l.ops);
}

/**
 * RoPE cos/sin table [ctx, D/2] as (cos, sin) f32 pairs, computed exactly like the reference
 * (src/model/reference/ops.ts ropeNeox): angle = f32(pos · inv_freq_i), then f32(cos), f32(sin).
 */
export function ropeTable(ctx: number, headDim: number, theta: number): Float32Array {
  const half = headDim / 2;
  const inv = ropeInvFreq(headDim, theta);
  const table = new Float32Array(ctx * half * 2);
  for (let pos = 0; pos < ctx; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(pos * inv[i]!);
      table[(pos * half + i) * 2] = Math.cos(angle);
      table[(pos * half + i) * 2 + 1] = Math.sin(angle);
    }
  }
  return table;
}
