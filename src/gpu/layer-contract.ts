// The shapes the WebGPU engine's layers are built from (./layers.ts builds them; ./activations.ts makes
// the shared buffers): the activations every layer reads and writes, a layer on the device, and what a
// row of the layer table is — for each mixer or ffn kind, the linears it uploads, what it refuses before
// a device is asked for, and the ops it records.
import type { KvCacheType } from '../model/kv-quant.ts';
import type { Linear, ModelConfig } from '../model/types.ts';
import type { GpuLinear } from './gpu-weights.ts';
import type { FoldedNorm } from './kernels/linear/linear-contract.ts';
import type { MoeShape } from './kernels/moe/moe.ts';
import type { Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';
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
  hybrid?: HybridActivations;  // Qwen3.5 mixers (./mixers/gated-attention.ts, ./mixers/gated-delta-net.ts)
  moe?: MoeActivations;        // when the engine holds MoE layers (./ffns/moe.ts)
  kvStage?: KvStage;           // a q8_0 KV cache: where qk_norm_rope leaves a step's K/V for kv_store_q8_0
}

/** A step's keys and values in f32, [T, Hkv·D] each, before kv_store_q8_0 quantizes them into the cache. */
export interface KvStage {
  k: GPUBuffer;
  v: GPUBuffer;
}

/** Activations only the Qwen3.5 mixers use, sized for T tokens a step. */
export interface HybridActivations {
  gate: GPUBuffer;             // [T, Hq·D] gated attention's output gate
  lin: GPUBuffer;              // [T, C + n_v·d_v] q|k|v|z
  ba: GPUBuffer;               // [T, 2·n_v]
  conv: GPUBuffer;             // [T, C]
  delta: GPUBuffer;            // [T, n_v·d_v] the delta rule's output
}

/** Buffers shared by an engine's MoE layers (all have the config's E, k and I_e). */
export interface MoeActivations {
  shape: MoeShape;
  intermediate: number;        // I_e
  logits: GPUBuffer;           // [T, E] router logits
  route: GPUBuffer;            // the routing buffer (shaders/lib/job_experts.wgsl)
  act: GPUBuffer;              // [T·k, I_e] silu(gate)·up per pair
  gu: GPUBuffer | undefined;   // [T·k, 2·I_e] when some layer's gate and up differ in format
  ye: GPUBuffer;               // [T·k, H] each pair's expert output
  bytesRead: GPUBuffer;        // [MoE layers held, E] u32: weight bytes the decode matvecs read per expert
  params: GPUBuffer;           // uniform MoeRoute
  layerSlots: Map<number, number>;  // layer index -> its row of `bytesRead`
  shared?: SharedExpertActivations; // Qwen3.5 MoE's shared expert
}

/** Qwen3.5 MoE: the shared expert every token also runs, gated by σ(shared_expert_gate · hn). */
export interface SharedExpertActivations {
  intermediate: number;        // I_s
  act: GPUBuffer;              // [T, I_s] silu(gate)·up
  out: GPUBuffer;              // [T, H] its output
  gate: GPUBuffer;             // [T] its gate logit
}

export interface GpuLayer {
  index: number;
  linears: GpuLinear[];
  norms: GPUBuffer[];
  kcache?: GPUBuffer;          // mixers with a KV cache: f16 pairs or q8_0 (./kernels/attention/kv-layout.ts)
  vcache?: GPUBuffer;
  state?: LinearState;         // Gated DeltaNet (./mixers/gated-delta-net.ts): conv and delta state
  ops: Op[];
  kvLength: number;            // tokens in its KV cache, or steps its recurrent state has taken
}

/** What a row's upload needs: the device, the engine's shared buffers and limits, and which layer. */
export interface LayerUpload {
  device: GPUDevice;
  cache: PipelineCache;
  cfg: ModelConfig;
  act: Activations;
  ctx: number;                 // KV capacity in tokens
  kv?: KvCacheType;            // how the KV cache stores values (default f16)
  maxBindingBytes: number;
  index: number;               // the layer's index
  name: string;                // "layer 3", the prefix of its ops' labels
  /**
   * The RMSNorm before this mixer or ffn (x -> xn), which the decode matvecs reading xn may fold in
   * (normToFold in ./kernels/linear/linear.ts); the part then says normFolded and ./layers.ts runs the
   * norm for prefill only. Absent: read xn.
   */
  norm?: FoldedNorm;
}

/** A mixer on the device: reads act.xn (or folds the norm: normFolded), adds its output to act.x in its last op. */
export type MixerPart = Pick<GpuLayer, 'linears' | 'norms' | 'ops' | 'kcache' | 'vcache' | 'state'> & { normFolded?: boolean };

/** An ffn on the device: reads act.xn (or folds the norm: normFolded), adds its output to act.x in its last op. */
export interface FfnPart {
  linears: GpuLinear[];
  ops: Op[];
  /** Every decode read of xn folds u.norm in: the layer skips that rmsnorm at decode. */
  normFolded?: boolean;
}

export interface GpuMixerRow<M> {
  /** The matrices the engine uploads (their bytes for progress, their formats for tuning). */
  linears(m: M): Linear[];
  /** Refuse by name what the kernels cannot run, before any device is asked for. */
  check?(cfg: ModelConfig, m: M, index: number): void;
  upload(u: LayerUpload, m: M): MixerPart;
}

export interface GpuFfnRow<F> {
  linears(f: F): Linear[];
  check?(cfg: ModelConfig, f: F, index: number): void;
  upload(u: LayerUpload, f: F): FfnPart;
}
