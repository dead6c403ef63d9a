// createCpuEngine: put exactly the parts in `weights` (a layer range, the embedding and head when
// present) into one WASM kernels instance and return a LayerEngine over them. Everything it cannot run
// is refused by name (CpuUnsupportedError) before any memory is taken; weights are copied into the
// kernels' memory as stored (blocks, never dequantized), so the engine keeps no second copy.
import type { LayerRange } from '../model/engine-types.ts';
import { EngineUsageError } from '../model/engine-errors.ts';
import { RecurrentState } from '../model/reference/recurrent-state.ts';
import { tensorToF32 } from '../model/reference/ops.ts';
import { isLinearLayer, type LoadProgress, type ModelWeights } from '../model/types.ts';
import type { KvCacheType } from '../model/kv-quant.ts';
import { CpuEngine } from './engine.ts';
import { CpuUnsupportedError } from './errors.ts';
import { loadKernelBinary } from './kernel-binary.ts';
import { CpuKvCache } from './kv-cache.ts';
import { checkLayer, checkLinear, placeLayer, type CpuLayer } from './layers.ts';
import { WasmKernels, type CpuActivations } from './wasm-kernels.ts';

export interface CpuEngineOptions {
  /** KV capacity in tokens (placed whole at creation). Default: maxPositionEmbeddings capped at DEFAULT_CTX_CAP. */
  ctx?: number;
  /** Recurrent-state snapshots kept at most (default 66). */
  maxSnapshots?: number;
  /** The KV cache's storage: only 'f16' (the default) here; a q8_0 cache is refused by name. */
  kv?: KvCacheType;
  /**
   * Threads the linears run on (default 1). More than 1 needs a caller that may block (Node, a Web
   * Worker; a page only when cross-origin isolated) and loads the `threads` build of the kernels.
   */
  threads?: number;
  /**
   * The linears' activations (see CpuActivations in ./wasm-kernels.ts): 'q8' quantizes them per 32
   * values and runs Q8_0/Q4_0/Q4_K/Q6_K weights in integer dot products (llama.cpp's approach, faster);
   * 'f32' keeps them f32, exact against the reference up to summation order. Default: DEFAULT_ACTIVATIONS.
   */
  activations?: CpuActivations;
  /** The compiled kernels (default: loadKernelBinary(threads > 1)). */
  binary?: Uint8Array;
  onProgress?: (p: LoadProgress) => void;
}

/** See the README's design decisions ("CPU activations") for why this is the default. */
export const DEFAULT_ACTIVATIONS: CpuActivations = 'f32';

/** The KV cache is placed whole: without a ctx a model's full 40k context would be GBs. */
export const DEFAULT_CTX_CAP = 4096;

function layerRange(weights: ModelWeights, hasHead: boolean): LayerRange {
  const idx = [...weights.layers.keys()].sort((a, b) => a - b);
  if (idx.length === 0) return hasHead ? [weights.config.numLayers, weights.config.numLayers] : [0, 0];
  idx.forEach((v, i) => {
    if (v !== idx[0]! + i) throw new EngineUsageError(`createCpuEngine: layers ${idx.join(', ')} are not a contiguous range`);
  });
  return [idx[0]!, idx[idx.length - 1]! + 1];
}

export async function createCpuEngine(weights: ModelWeights, opts: CpuEngineOptions = {}): Promise<CpuEngine> {
  const cfg = weights.config;
  const ctx = opts.ctx ?? Math.min(cfg.maxPositionEmbeddings, DEFAULT_CTX_CAP);
  if (!(Number.isInteger(ctx) && ctx > 0)) throw new EngineUsageError(`createCpuEngine: ctx ${ctx} must be a positive integer`);
  if ((opts.kv ?? 'f16') !== 'f16') {
    throw new CpuUnsupportedError(`the WASM engine keeps its KV cache in f16; a ${opts.kv} cache is not supported on it yet (use ?kv=f16, or put this device on WebGPU)`);
  }
  for (const w of weights.layers.values()) checkLayer(cfg, w);
  if (weights.embedding) checkLinear(weights.embedding, 'embedding');
  const headWeight = weights.lmHead ?? (cfg.tieWordEmbeddings ? weights.embedding : undefined);
  if (weights.lmHead) checkLinear(weights.lmHead, 'lm_head');
  const hasHead = Boolean(weights.finalNorm && headWeight);
  const range = layerRange(weights, hasHead);
  const held = Array.from({ length: range[1] - range[0] }, (_, i) => range[0] + i);
  const attention = held.filter((i) => !isLinearLayer(cfg, i)), linear = held.filter((i) => isLinearLayer(cfg, i));
  const kvBytes = attention.length * 2 * ctx * cfg.numKvHeads * cfg.headDim * 2;
  if (kvBytes > 2 ** 31) throw new CpuUnsupportedError(`createCpuEngine: a KV cache of ${ctx} tokens over ${attention.length} layers needs ${kvBytes} bytes; a wasm32 memory holds 4 GiB in all; choose a smaller ctx`);

  const threads = opts.threads ?? 1;
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= 64)) throw new EngineUsageError(`createCpuEngine: threads ${threads} must be a whole number in 1..64`);
  const k = await WasmKernels.create(opts.binary ?? await loadKernelBinary(threads > 1), { threads, activations: opts.activations ?? DEFAULT_ACTIVATIONS });
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
  const cache = new CpuKvCache(k, { capacity: ctx, kvWidth: cfg.numKvHeads * cfg.headDim, layers: attention });
  const h = cfg.hybrid;
  const state = new RecurrentState({
    layers: linear, ...(opts.maxSnapshots === undefined ? {} : { maxSnapshots: opts.maxSnapshots }),
    dims: {
      numKeyHeads: h?.linearNumKeyHeads ?? 1, numValueHeads: h?.linearNumValueHeads ?? 1, keyDim: h?.linearKeyHeadDim ?? 1,
      valueDim: h?.linearValueHeadDim ?? 1, convKernel: h?.convKernel ?? 1, valueHeads: 'grouped',
    },
  });
  return new CpuEngine({ kernels: k, config: cfg, range, layers, cache, state, embedding, head, weightBytes });
}
