// What a WebGPU engine is made of (create-engine.ts builds it) and what it reports: the buffers, layers and
// head an engine owns, its counters as stats, and how all of it is freed. Kept apart so engine.ts is about
// its calls.
import type { LayerRange } from '../model/engine-types.ts';
import type { ModelConfig } from '../model/types.ts';
import type { GpuLinear } from './gpu-weights.ts';
import type { HeadState } from './head.ts';
import type { Activations, GpuLayer } from './layer-contract.ts';
import { destroyLayer } from './layers.ts';
import { destroyMoeActivations } from './ffns/moe.ts';
import { destroyOps, type Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';
import type { GpuSnapshots } from './recurrent-snapshots.ts';
import { describeTuning } from './tuning.ts';

/** Counters the generator and the bench report. */
export interface EngineStats {
  submits: number;             // queue submits since creation
  readbacks: number;           // buffer maps (each waits for the GPU) since creation
  pickRedos: number;           // sampleAndRun's device picks the reference sampler overruled (layers run again)
  decodesAhead: number;        // decode calls whose token was already submitted by the call before (engine.ts decodeOne)
  dispatches: number;          // compute dispatches since creation
  layerTokens: number;         // tokens run through this engine's layers
  decodeDispatchesPerLayer: number;  // dispatches one layer takes for one token (the mean over held layers)
  snapshots: number;           // recurrent-state snapshots kept (hybrid checkpoints; 0 for Qwen3)
  snapshotPositions: number[];
  bytesPerSnapshot: number;    // every held Gated DeltaNet layer's conv + delta state, f32
  snapshotBytes: number;       // snapshots · bytesPerSnapshot
  pipelines: number;           // compiled pipelines (cached by key)
  kernels: string;             // the tuned kernel layouts (src/gpu/tuning.ts describeTuning)
  useF16: boolean;
  ctx: number;
  maxBatch: number;            // tokens a step (createWebGPUEngine's maxBatch: 64, or the adapter's with 'auto')
  maxBindingBytes: number;
  weightBytes: number;
  last: { op: string; tokens: number; submits: number; dispatches: number };
}

export interface EngineParts {
  device: GPUDevice;
  cache: PipelineCache;
  config: ModelConfig;
  range: LayerRange;
  layers: GpuLayer[];
  act: Activations;
  maxBatch: number;
  ctx: number;
  maxBindingBytes: number;
  weightBytes: number;
  embedding?: GpuLinear;
  embedOps: Op[];
  ids: GPUBuffer;              // [maxBatch] u32
  head?: HeadState;
  ownsDevice: boolean;         // made by createWebGPUEngine (destroyed with the engine)
  snapshots: GpuSnapshots;     // checkpoints of the Gated DeltaNet layers' state (none held: empty)
}

/** The counts an engine keeps itself (the rest of its stats are read off its parts). */
export interface EngineCounters {
  submits: number;
  readbacks: number;
  pickRedos: number;
  decodesAhead: number;
  dispatches: number;
  layerTokens: number;
}

export function engineStats(parts: EngineParts, counters: EngineCounters, last: EngineStats['last']): EngineStats {
  const { layers, snapshots } = parts;
  const positions = snapshots.positions();
  return {
    ...counters,
    decodeDispatchesPerLayer: layers.length ? layers.reduce((s, l) => s + decodeOps(l.ops), 0) / layers.length : 0,
    snapshots: positions.length,
    snapshotPositions: positions,
    bytesPerSnapshot: snapshots.bytesPerSnapshot(),
    snapshotBytes: positions.length * snapshots.bytesPerSnapshot(),
    pipelines: parts.cache.size,
    kernels: describeTuning(parts.cache.tuning),
    useF16: parts.cache.useF16,
    ctx: parts.ctx,
    maxBatch: parts.maxBatch,
    maxBindingBytes: parts.maxBindingBytes,
    weightBytes: parts.weightBytes,
    last: { ...last },
  };
}

/** Free every buffer of `parts` (and the device, when the engine made it). */
export function destroyParts(parts: EngineParts): void {
  parts.layers.forEach(destroyLayer);
  parts.snapshots.destroy();
  parts.head?.destroy();
  parts.embedding?.chunks.forEach((c) => c.buffers.forEach((b) => b.destroy()));
  destroyOps(parts.embedOps);
  const a = parts.act;
  [a.step, a.x, a.xn, a.qkv, a.q, a.att, a.part, a.act, a.rope, parts.ids].forEach((b) => b.destroy());
  a.gu?.destroy();
  if (a.hybrid) Object.values(a.hybrid).forEach((b) => b.destroy());
  if (a.moe) destroyMoeActivations(a.moe);
  a.kvStage?.k.destroy();
  a.kvStage?.v.destroy();
  if (parts.ownsDevice) parts.device.destroy();
}

/** The ops of a layer that run for a decode token (a norm folded into its readers runs for prefill only). */
function decodeOps(ops: readonly Op[]): number {
  return ops.filter((o) => o.runsAt?.(1) ?? true).length;
}
