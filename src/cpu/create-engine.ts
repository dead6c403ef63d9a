// createCpuEngine: put exactly the parts in `weights` (a layer range, the embedding and head when
// present) into one WASM kernels instance and return a LayerEngine over them. Everything it cannot run
// is refused by name (CpuUnsupportedError) before any memory is taken; weights are copied into the
// kernels' memory as stored (blocks, never dequantized), so the engine keeps no second copy. Streamed
// weights (openWeights) are read straight into their places in that memory (./stream-sink.ts).
import { heldLayerRange } from '../model/held-range.ts';
import type { LayerRange } from '../model/engine-types.ts';
import { EngineUsageError } from '../model/engine-errors.ts';
import { tensorToF32 } from '../model/reference/ops.ts';
import { isLinearLayer, type LoadProgress, type ModelWeights } from '../model/types.ts';
import { isKvCacheType, KV_CACHE_TYPES, type KvCacheType } from '../model/kv-quant.ts';
import { CpuEngine } from './engine.ts';
import { CpuUnsupportedError } from './errors.ts';
import { loadKernelBinary } from './kernel-binary.ts';
import { CpuKvCache, kvRowBytes } from './kv-cache.ts';
import { CpuRecurrentState } from './recurrent-state.ts';
import { CPU_ACTIVATIONS, isCpuActivations, type SimdChoice } from './simd-path.ts';
import { checkLayer, checkLinear, placeLayer, type CpuLayer } from './layers.ts';
import { WasmStreamSink } from './stream-sink.ts';
import { WasmKernels, type CpuActivations } from './wasm-kernels.ts';

export interface CpuEngineOptions {
  /** KV capacity in tokens (placed whole at creation). Default: maxPositionEmbeddings capped at DEFAULT_CTX_CAP. */
  ctx?: number;
  /** Recurrent-state snapshots kept at most (default 66). */
  maxSnapshots?: number;
  /** The KV cache's storage: 'f16' (the default) or 'q8_0' (llama.cpp's 8-bit blocks, about half the bytes). */
  kv?: KvCacheType;
  /**
   * Threads the linears run on (default 1). More than 1 needs a caller that may block (Node, a Web
   * Worker; a page only when cross-origin isolated) and loads the `threads` build of the kernels.
   */
  threads?: number;
  /**
   * The kernels' SIMD path: 'auto' (the default: relaxed SIMD where this WebAssembly engine validates it,
   * src/cpu/simd-path.ts), or one forced ('plain': the SIMD128-only build, ?simd=plain in the app).
   */
  simd?: SimdChoice;
  /**
   * The linears' activations (see CpuActivations in ./wasm-kernels.ts): 'q8' quantizes them per 32
   * values and runs Q8_0/Q4_0/Q4_K/Q6_K weights in integer dot products (llama.cpp's approach, faster);
   * 'f32' keeps them f32, exact against the reference up to summation order. Default: DEFAULT_ACTIVATIONS.
   */
  activations?: CpuActivations;
  /** The compiled kernels (default: loadKernelBinary(threads > 1, simd)). */
  binary?: Uint8Array;
  onProgress?: (p: LoadProgress) => void;
}

/** See the README's design decisions ("CPU activations") for why this is the default. */
export const DEFAULT_ACTIVATIONS: CpuActivations = 'f32';

/** The KV cache is placed whole: without a ctx a model's full 40k context would be GBs. */
export const DEFAULT_CTX_CAP = 4096;

export async function createCpuEngine(weights: ModelWeights, opts: CpuEngineOptions = {}): Promise<CpuEngine> {
  const cfg = weights.config;
  const ctx = opts.ctx ?? Math.min(cfg.maxPositionEmbeddings, DEFAULT_CTX_CAP);
  if (!(Number.isInteger(ctx) && ctx > 0)) throw new EngineUsageError(`createCpuEngine: ctx ${ctx} must be a positive integer`);
  const kvType = opts.kv ?? 'f16';
  if (!isKvCacheType(kvType)) throw new EngineUsageError(`createCpuEngine: kv ${String(kvType)} must be ${KV_CACHE_TYPES.join(' or ')}`);
  for (const w of weights.layers.values()) checkLayer(cfg, w);
  if (weights.embedding) checkLinear(weights.embedding, 'embedding');
  const headWeight = weights.lmHead ?? (cfg.tieWordEmbeddings ? weights.embedding : undefined);
  if (weights.lmHead) checkLinear(weights.lmHead, 'lm_head');
  const hasHead = Boolean(weights.finalNorm && headWeight);
  const range = heldLayerRange(weights, hasHead, 'createCpuEngine');
  const held = Array.from({ length: range[1] - range[0] }, (_, i) => range[0] + i);
  const attention = held.filter((i) => !isLinearLayer(cfg, i)), linear = held.filter((i) => isLinearLayer(cfg, i));
  const kvBytes = attention.length * 2 * ctx * kvRowBytes(kvType, cfg.numKvHeads, cfg.headDim);
  if (kvBytes > 2 ** 31) throw new CpuUnsupportedError(`createCpuEngine: a KV cache of ${ctx} tokens over ${attention.length} layers needs ${kvBytes} bytes; a wasm32 memory holds 4 GiB in all; choose a smaller ctx`);

  const threads = opts.threads ?? 1;
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= 64)) throw new EngineUsageError(`createCpuEngine: threads ${threads} must be a whole number in 1..64`);
  // a value from another global (a worker's load request) is checked here, not read as f32 by default
  if (opts.activations !== undefined && !isCpuActivations(opts.activations)) throw new EngineUsageError(`createCpuEngine: activations "${String(opts.activations)}" must be ${CPU_ACTIVATIONS.join(' or ')}`);
  const k = await WasmKernels.create(opts.binary ?? await loadKernelBinary(threads > 1, opts.simd ?? 'auto'), { threads, activations: opts.activations ?? DEFAULT_ACTIVATIONS });
  try {
    return await placeAll(k, weights, { ctx, range, held, attention, linear, hasHead, kvType, opts });
  } catch (e) {
    k.close();                         // a failed load (a cut stream, a bad tensor) leaves no worker running
    throw e;
  }
}

interface Placement { ctx: number; range: LayerRange; held: number[]; attention: number[]; linear: number[]; hasHead: boolean; kvType: KvCacheType; opts: CpuEngineOptions }

/** Everything in `weights` into k's memory (streamed weights read straight into their places first). */
async function placeAll(k: WasmKernels, weights: ModelWeights, { ctx, range, held, attention, linear, hasHead, kvType, opts }: Placement): Promise<CpuEngine> {
  const cfg = weights.config;
  if (weights.pending) {
    // Streamed: every byte gets its final place first, then the load runs straight into those places.
    const sink = new WasmStreamSink(k);
    sink.reserve(weights);
    sink.checkCovered(weights.pending.tensors);
    await weights.pending.run((piece) => sink.write(piece));
    k.streamSink = sink;
  }
  const parts = weights.layers.size + (weights.embedding ? 1 : 0) + (weights.lmHead ? 1 : 0);
  let done = 0, placed = 0;
  const progress = (bytes: number): void => {
    done += bytes;
    placed++;
    opts.onProgress?.({ bytesDone: done, bytesTotal: 0, tensorsDone: placed, tensorsTotal: parts });
  };
  const layers = new Map<number, CpuLayer>();
  for (const i of held) {
    const layer = placeLayer(k, weights.layers.get(i)!);
    layers.set(i, layer);
    progress(layer.bytes);
  }
  const embedding = weights.embedding ? k.placeLinear(weights.embedding) : undefined;
  if (embedding) progress(embedding.bytes);
  let head;
  if (hasHead) {
    const own = weights.lmHead ? k.placeLinear(weights.lmHead) : undefined;
    if (own) progress(own.bytes);
    head = { norm: k.put(tensorToF32(weights.finalNorm!)), weight: own ?? embedding! };
  }
  const weightBytes = k.used;
  const cache = new CpuKvCache(k, { capacity: ctx, kvHeads: cfg.numKvHeads, headDim: cfg.headDim, layers: attention, type: kvType });
  k.streamSink = undefined;
  const h = cfg.hybrid;
  const state = new CpuRecurrentState(k, {
    layers: linear, ...(opts.maxSnapshots === undefined ? {} : { maxSnapshots: opts.maxSnapshots }),
    dims: {
      numKeyHeads: h?.linearNumKeyHeads ?? 1, numValueHeads: h?.linearNumValueHeads ?? 1, keyDim: h?.linearKeyHeadDim ?? 1,
      valueDim: h?.linearValueHeadDim ?? 1, convKernel: h?.convKernel ?? 1, valueHeads: 'grouped',
    },
  });
  return new CpuEngine({ kernels: k, config: cfg, range, layers, cache, state, embedding, head, weightBytes });
}
