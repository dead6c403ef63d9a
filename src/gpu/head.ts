// The final norm, the LM head (tied: the embedding) and on-device candidate selection. Sampling reads
// back blocks·k (value, id) pairs from topk_blocks instead of all V logits (k = 1 for greedy).
import type { ModelConfig, TensorData } from '../model/types.ts';
import { createBufferFrom, destroyLinear, uploadNorm, type GpuLinear } from './gpu-weights.ts';
import type { Activations } from './layer-contract.ts';
import { Epilogue, linearOps } from './kernels/linear/linear.ts';
import { rmsnormOp } from './kernels/common/rmsnorm.ts';
import { pickBestOp } from './kernels/sampling/pick-best.ts';
import { SAMPLE_PICK_MAX_K, SAMPLE_PICK_OUT_WORDS, samplePickOp } from './kernels/sampling/sample-pick.ts';
import { topkBlocks, topkOp as makeTopkOp } from './kernels/sampling/topk-blocks.ts';
import { topkLayoutFor } from './tuning.ts';
import { destroyOps, type Op } from './op.ts';
import type { PipelineCache } from './pipelines.ts';

const MAX_K = SAMPLE_PICK_MAX_K;

export interface HeadState {
  vocab: number;
  logits: GPUBuffer;           // [V] f32
  mask: GPUBuffer;             // [ceil(V/32)] u32 allowed-id bitset
  maskWords: number;
  params: GPUBuffer;           // uniform { use_mask, mask_words }
  best: GPUBuffer;             // [blocks, k] (f32 bits, id), then [blocks] unmasked bests when reported
  blocks: number;
  logitOps: Op[];              // final rmsnorm (x -> xn) + head matvec chunks (xn -> logits)
  argmaxOp: Op;
  topkOp(k: number): Op;
  /** The argmax over `best` (after argmaxOp) written to ids[0]: the pick feeds the embedding gather. */
  pickOp: Op;
  /** A sampled pick over `best` (after topkOp(k)) under `pickParams`, written to ids[0] and `picked`. */
  samplePickOp: Op;
  pickParams: GPUBuffer;       // uniform sample_pick Params { k, temperature, top_p, u }
  picked: GPUBuffer;           // sample_pick's out: [pick, found, kept, 0, top-k pairs]
  destroy(): void;
}

export function createHead(
  device: GPUDevice, cache: PipelineCache, cfg: ModelConfig, finalNorm: TensorData, head: GpuLinear,
  ownsHead: boolean, act: Activations, ids: GPUBuffer,
): HeadState {
  const V = head.rows;
  const H = cfg.hiddenSize;
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const norm = uploadNorm(device, finalNorm);
  const logits = device.createBuffer({ label: 'logits', size: V * 4, usage: storage });
  const maskWords = Math.ceil(V / 32);
  const mask = createBufferFrom(device, new Uint8Array(maskWords * 4), storage, 'token mask');
  const params = device.createBuffer({ label: 'sample params', size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const layout = cache.tuning.topk ?? topkLayoutFor(cache.tuning.adapterClass);
  const blocks = topkBlocks(V, layout);
  // [blocks, k] candidates, then [blocks] unmasked bests (the overrule report)
  const best = device.createBuffer({ label: 'top-k candidates', size: blocks * (MAX_K + 1) * 8, usage: storage });
  const pickOp = pickBestOp(cache, { best, ids }, blocks);
  const pickParams = device.createBuffer({ label: 'sample pick params', size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const picked = device.createBuffer({ label: 'sampled pick', size: SAMPLE_PICK_OUT_WORDS * 4, usage: storage });
  const sampleOp = samplePickOp(cache, { params: pickParams, best, ids, out: picked }, blocks, layout.WG);
  const logitOps: Op[] = [
    rmsnormOp(cache, { step: act.step, x: act.x, weight: norm, y: act.xn }, H, cfg.rmsNormEps, 'model.norm'),
    ...linearOps(cache, head, { step: act.step, x: act.xn, y: logits, outStride: V, epilogue: Epilogue.STORE }),
  ];
  const topkOps = new Map<number, Op>();
  const topkOp = (k: number): Op => {
    if (!(k >= 1 && k <= MAX_K)) throw new RangeError(`top-k on the device takes 1..${MAX_K}, got ${k}`);
    let op = topkOps.get(k);
    if (!op) {
      op = makeTopkOp(cache, { params, logits, mask, best }, V, k, layout);
      topkOps.set(k, op);
    }
    return op;
  };
  return {
    vocab: V, logits, mask, maskWords, params, best, blocks, logitOps, argmaxOp: topkOp(1), topkOp,
    pickOp, samplePickOp: sampleOp, pickParams, picked,
    destroy() {
      [norm, logits, mask, params, best, pickParams, picked].forEach((b) => b.destroy());
      destroyOps(logitOps);
      if (ownsHead) destroyLinear(head);
    },
  };
}
