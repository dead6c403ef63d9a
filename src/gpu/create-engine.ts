// createWebGPUEngine: put exactly the parts in `weights` (a layer range, the embedding and head when
// present) on one GPU device and return a LayerEngine over them. The room calls this once per device.
import { heldLayerRange } from '../model/held-range.ts';
import { EngineUsageError } from '../model/engine-errors.ts';
import { isLinearLayer, type DecoderLayerWeights, type Linear, type LoadProgress, type ModelWeights } from '../model/types.ts';
import { createActivations, widestActivationRow } from './activations.ts';
import { requestEngineDevice } from './device.ts';
import { GpuResourceError } from './errors.ts';
import { WebGPUEngine } from './engine.ts';
import { uploadLinear, type GpuLinear } from './gpu-weights.ts';
import { WeightWriter, withWriter } from './weight-writer.ts';
import { heldOrStreamedBytes } from '../model/load-stream.ts';
import { createHead } from './head.ts';
import type { GpuLayer } from './layer-contract.ts';
import { checkLayer, layerLinears, uploadLayer } from './layers.ts';
import { GpuSnapshots } from './recurrent-snapshots.ts';
import { embedOps } from './kernels/linear/linear.ts';
import { PipelineCache } from './pipelines.ts';
import { kvBufferBytes } from './kernels/attention/kv-layout.ts';
import { isKvCacheType, KV_CACHE_TYPES, type KvCacheType } from '../model/kv-quant.ts';
import { autotune } from './autotune.ts';
import { deviceTraits, prefillStepFor, type LinearFormat, type TopkLayout, type Tuning } from './tuning.ts';

export interface WebGPUEngineOptions {
  /** KV capacity in tokens. Default: the model's maxPositionEmbeddings, capped at DEFAULT_CTX_CAP. */
  ctx?: number;
  /** Device to use; default: a new one from navigator.gpu (browser) or npm `webgpu` (Node). */
  device?: GPUDevice;
  /** Use shader-f16 where the device has it (default true); false forces the f32 path. */
  useF16?: boolean;
  /** Split weights into buffers of at most this many bytes (default: the device's binding limit). */
  maxBindingBytes?: number;
  /**
   * Tokens per prefill submit (activation buffers are sized for it). Default 64 (what the room's deal
   * counts for a device that reports no step, src/model/engine-scratch.ts ENGINE_MAX_BATCH). 'auto': the
   * adapter class's step within the device's limits (src/gpu/tuning.ts prefillStepFor: 512 on a discrete
   * GPU): what the app's WebGPU row asks for (src/gpu/engine-row.ts) and the GPU bench reports.
   */
  maxBatch?: number | 'auto';
  /**
   * The most tokens a step, whatever maxBatch picks: the step the room's deal gave this device (its
   * scratch was counted at it, src/room/device-step.ts), so the engine never allocates more than dealt.
   */
  maxStep?: number;
  /** Upload progress: bytes of weights on the device so far. */
  onProgress?: (p: LoadProgress) => void;
  /**
   * Kernel layouts: 'auto' (default) times the adapter class's candidates once per adapter (cached);
   * 'default' takes the class's first candidate untimed; or an explicit Tuning.
   */
  tuning?: Tuning | 'auto' | 'default';
  /** Recurrent-state snapshots (checkpoints of a hybrid's Gated DeltaNet layers) kept at most (default 66). */
  maxSnapshots?: number;
  /** The head's top-k layout instead of the tuning's (benches compare them on one adapter). */
  topk?: TopkLayout;
  /** How the KV cache stores values: 'f16' (default) or 'q8_0' (llama.cpp's blocks: half the bytes). */
  kv?: KvCacheType;
}

/** Without a ctx option a model's full context (40k for Qwen3) would cost 4.7 GB of KV for 1.7B. */
export const DEFAULT_CTX_CAP = 4096;

async function defaultDevice(useF16: boolean | undefined): Promise<GPUDevice> {
  if (globalThis.navigator?.gpu) return requestEngineDevice({ useF16 });
  const nodeGpuModule = './node-gpu.ts';   // Node only: kept out of browser bundles
  const { nodeAdapter } = (await import(/* @vite-ignore */ nodeGpuModule)) as typeof import('./node-gpu.ts');
  return requestEngineDevice({ adapter: await nodeAdapter(), useF16 });
}

function linearBytes(l: Linear): number {
  if (l.kind === 'ggml') return l.segments.reduce((a, s) => a + heldOrStreamedBytes(s), 0);
  return l.kind === 'dense' ? heldOrStreamedBytes(l.weight) : heldOrStreamedBytes(l.qweight) + heldOrStreamedBytes(l.scales);
}

type EngineLayer = DecoderLayerWeights;

/**
 * The layers as this engine runs them: every mixer and ffn kind of ./layers.ts's table (Qwen3 dense and
 * MoE, Qwen3.5 hybrids dense and MoE), in any weight format (ggml block types included). Shapes past a
 * kind's kernels are refused by name here (its row's check), before any GPU memory is used.
 */
function engineLayers(weights: ModelWeights): Map<number, EngineLayer> {
  for (const w of weights.layers.values()) checkLayer(weights.config, w);
  return weights.layers;
}

function tensorBytes(layers: Map<number, EngineLayer>, weights: ModelWeights): number {
  let total = 0;
  for (const w of layers.values()) total += layerLinears(w).reduce((a, l) => a + linearBytes(l), 0);
  if (weights.embedding) total += linearBytes(weights.embedding);
  if (weights.lmHead) total += linearBytes(weights.lmHead);
  return total;
}

/** The weight formats the engine's linears use (what the start-up tuning measures). */
function formatsOf(layers: Map<number, EngineLayer>, weights: ModelWeights): LinearFormat[] {
  const linears = [...layers.values()].flatMap(layerLinears);
  if (weights.lmHead) linears.push(weights.lmHead);
  else if (weights.embedding && weights.finalNorm) linears.push(weights.embedding);   // the tied head
  const formats = new Set<LinearFormat>();
  for (const l of linears) {
    if (l.kind === 'dense') formats.add('dense');
    else if (l.kind === 'q4f16_1') formats.add('q4');
    else for (const s of l.segments) formats.add(s.type === 'F32' || s.type === 'F16' || s.type === 'BF16' ? 'dense' : 'ggml');
  }
  return [...formats].sort();
}

async function pipelineCache(
  device: GPUDevice, useF16: boolean, layers: Map<number, EngineLayer>, weights: ModelWeights, tuning: Tuning | 'auto' | 'default',
): Promise<PipelineCache> {
  if (typeof tuning === 'object') return new PipelineCache(device, useF16, tuning);
  const cache = new PipelineCache(device, useF16);
  const formats = formatsOf(layers, weights);
  if (tuning === 'default' || formats.length === 0) return cache;
  return cache.withTuning((await autotune(cache, formats)).tuning);
}

/**
 * Run the (synchronous) making of an engine's buffers; if it throws, destroy every buffer it made, so a
 * failed engine leaves nothing allocated. With a writer, streamed tensors register their places there.
 */
function builtOrUndone<T>(device: GPUDevice, writer: WeightWriter | undefined, make: () => T): T {
  const made: GPUBuffer[] = [];
  const own = Object.prototype.hasOwnProperty.call(device, 'createBuffer');
  const original = device.createBuffer;
  device.createBuffer = (desc: GPUBufferDescriptor): GPUBuffer => {
    const b = original.call(device, desc);
    made.push(b);
    return b;
  };
  try {
    return writer ? withWriter(writer, make) : make();
  } catch (e) {
    for (const b of made) b.destroy();
    throw e;
  } finally {
    if (own) device.createBuffer = original;
    else delete (device as { createBuffer?: unknown }).createBuffer;
  }
}

/**
 * Weights with `pending` (openWeights) stream: every weight buffer is made empty, the engine is built,
 * then the pending bytes are written into their places as they are read (weight-writer.ts), at most
 * LOAD_IN_FLIGHT_BYTES of them in JS at once. A failed stream (truncated file, network, abort) disposes of
 * the engine before the error is rethrown: nothing stays allocated.
 */
export async function createWebGPUEngine(weights: ModelWeights, opts: WebGPUEngineOptions = {}): Promise<WebGPUEngine> {
  const cfg = weights.config;
  const held = engineLayers(weights);
  const device = opts.device ?? await defaultDevice(opts.useF16);
  const useF16 = opts.useF16 !== false && device.features.has('shader-f16');
  const maxBindingBytes = Math.min(opts.maxBindingBytes ?? Infinity, device.limits.maxStorageBufferBindingSize);
  const ctx = opts.ctx ?? Math.min(cfg.maxPositionEmbeddings, DEFAULT_CTX_CAP);
  if (opts.maxStep !== undefined && !(Number.isInteger(opts.maxStep) && opts.maxStep >= 1)) throw new EngineUsageError(`createWebGPUEngine: maxStep ${opts.maxStep} must be a positive integer`);
  const wanted = opts.maxBatch === 'auto'
    ? prefillStepFor(deviceTraits(device).adapterClass, device.limits, widestActivationRow(cfg))
    : opts.maxBatch ?? 64;
  if (!(Number.isInteger(wanted) && wanted >= 1)) throw new EngineUsageError(`createWebGPUEngine: maxBatch ${String(opts.maxBatch)} must be a positive integer or 'auto'`);
  const maxBatch = Math.min(wanted, opts.maxStep ?? Infinity);
  if (!(Number.isInteger(ctx) && ctx > 0)) throw new EngineUsageError(`createWebGPUEngine: ctx ${ctx} must be a positive integer`);
  if (cfg.headDim % 2 !== 0 || cfg.headDim > 512) throw new EngineUsageError(`createWebGPUEngine: head_dim ${cfg.headDim} must be even and ≤ 512`);
  const headWeight = weights.lmHead ?? (cfg.tieWordEmbeddings ? weights.embedding : undefined);
  const kv = opts.kv ?? 'f16';
  if (!isKvCacheType(kv)) throw new EngineUsageError(`createWebGPUEngine: kv ${String(kv)} must be one of ${KV_CACHE_TYPES.join(', ')}`);
  const kvBytes = kvBufferBytes({ Hkv: cfg.numKvHeads, D: cfg.headDim }, { type: kv, ctx });
  const attentionLayers = [...weights.layers.keys()].filter((i) => !isLinearLayer(cfg, i)).length;
  if (attentionLayers > 0 && kvBytes > maxBindingBytes) {
    throw new GpuResourceError(`createWebGPUEngine: a KV cache of ${ctx} tokens needs ${kvBytes} bytes per layer buffer, over the binding limit of ${maxBindingBytes}; choose a smaller ctx`);
  }
  const hasHead = Boolean(weights.finalNorm && headWeight);
  const range = heldLayerRange(weights, hasHead, 'createWebGPUEngine');
  const tuned = await pipelineCache(device, useF16, held, weights, opts.tuning ?? 'auto');
  const cache = opts.topk ? tuned.withTuning({ ...tuned.tuning, topk: opts.topk }) : tuned;

  const writer = weights.pending ? new WeightWriter(device) : undefined;
  const engine = builtOrUndone(device, writer, () => {
    const T = maxBatch;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const act = createActivations(device, cache, cfg, [...held.values()], { T, ctx, maxBindingBytes, kv });

    const total = tensorBytes(held, weights);
    let done = 0;
    const progress = (bytes: number, tensorsDone: number, tensorsTotal: number): void => {
      done += bytes;
      opts.onProgress?.({ bytesDone: done, bytesTotal: total, tensorsDone, tensorsTotal });
    };
    const layers: GpuLayer[] = [];
    const parts = weights.layers.size + (weights.embedding ? 1 : 0) + (weights.lmHead ? 1 : 0);
    for (let i = range[0]; i < range[1] && weights.layers.size > 0; i++) {
      const w = held.get(i)!;
      const layer = uploadLayer({ device, cache, cfg, act, ctx, kv, maxBindingBytes }, w);
      layers.push(layer);
      progress(layer.linears.reduce((s, l) => s + l.bytes, 0), layers.length, parts);
    }
    let embedding: GpuLinear | undefined;
    if (weights.embedding) {
      embedding = uploadLinear(device, weights.embedding!, maxBindingBytes);
      progress(embedding.bytes, layers.length + 1, parts);
    }
    const ids = device.createBuffer({ label: 'ids', size: Math.max(16, T * 4), usage: storage });
    let head;
    let headBytes = 0;
    if (hasHead) {
      const own = weights.lmHead ? uploadLinear(device, weights.lmHead!, maxBindingBytes) : undefined;
      if (own) progress((headBytes = own.bytes), parts, parts);
      head = createHead(device, cache, cfg, weights.finalNorm!, own ?? embedding!, Boolean(own), act, ids);
    }
    const weightBytes = layers.reduce((s, l) => s + l.linears.reduce((a, b) => a + b.bytes, 0), 0)
      + (embedding?.bytes ?? 0) + headBytes;
    return new WebGPUEngine({
      device, cache, config: cfg, range, layers, act, maxBatch, ctx, maxBindingBytes, weightBytes,
      embedding, embedOps: embedding ? embedOps(cache, embedding, { step: act.step, ids, out: act.x }) : [], ids, head,
      ownsDevice: !opts.device,
      snapshots: new GpuSnapshots(device, layers.flatMap((l) => (l.state ? [l.state] : [])), opts.maxSnapshots),
    });
  });
  if (weights.pending && writer) {
    try {
      writer.checkCovered(weights.pending.tensors);
      await weights.pending.run((piece) => writer.write(piece));
      await writer.finish();
    } catch (e) {
      await engine.dispose();
      throw e;
    }
  }
  await device.queue.onSubmittedWorkDone();
  return engine;
}
