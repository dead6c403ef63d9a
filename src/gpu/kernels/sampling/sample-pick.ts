// sample_pick (shaders/sample_pick.wgsl): a temperature / top-k / top-p pick over topk_blocks' per-block
// candidates, written into the ids buffer the embedding gather reads (pick_best's sampling twin), so a
// split room's host feeds a sampled token to its layers in the same submit. In f32: the engine checks the
// pick against the reference sampler on the read-back candidates (src/gpu/candidates.ts checkDevicePick).
import source from '../../../../shaders/sample_pick.wgsl?raw';
import bestCandidate from '../../../../shaders/lib/best_candidate.wgsl?raw';
import { defineKernel, read, rw, uniformStruct, uniformWords, type BufferSet } from '../../kernel.ts';
import { kernelOp, type Op } from '../../op.ts';
import type { PipelineCache } from '../../pipelines.ts';

/** Most candidates the kernel merges (topk_blocks' TOPK); src/gpu/candidates.ts MAX_DEVICE_TOPK. */
export const SAMPLE_PICK_MAX_K = 64;
/** Blocks one lane merges at most (shaders/sample_pick.wgsl MAX_LANE_BLOCKS). */
const MAX_LANE_BLOCKS = 128;
/** u32 words of `out`: pick, found, kept, 0, then [MAX_K] (f32 bits, id) pairs. */
export const SAMPLE_PICK_OUT_WORDS = 4 + 2 * SAMPLE_PICK_MAX_K;

export const SAMPLE_PICK = defineKernel({
  name: 'sample_pick',
  source,
  libs: [bestCandidate],
  bindings: {
    params: uniformStruct('Params', ['k', 'temperature', 'top_p', 'u']),   // written per pick; the last three f32 bits
    best: read('array<vec2<u32>>'),  // [blocks, k]: (f32 bits, id) from topk_blocks with TOPK = k
    ids: rw('array<u32>'),           // [≥ 1]: ids[0] = the pick
    out: rw('array<u32>'),           // [SAMPLE_PICK_OUT_WORDS]: pick, found, kept, 0, the merged top-k pairs
  },
});

export interface SamplePickParams {
  k: number;                   // candidates per block in `best` (topk_blocks' TOPK), 1..SAMPLE_PICK_MAX_K
  temperature: number;         // > 0
  topP: number;                // (0, 1]; 1 = off
  u: number;                   // the reference sampler's uniform in [0, 1) (a multiple of 2^-24: exact in f32)
}

/** The params uniform's words: k, then temperature, top_p and u as f32 bits. */
export function samplePickWords(p: SamplePickParams): Uint32Array {
  if (!(Number.isInteger(p.k) && p.k >= 1 && p.k <= SAMPLE_PICK_MAX_K)) throw new RangeError(`sample_pick takes k in 1..${SAMPLE_PICK_MAX_K}, got ${p.k}`);
  const bits = new Uint32Array(new Float32Array([p.temperature, p.topP, p.u]).buffer);
  return uniformWords(SAMPLE_PICK.bindings.params, { k: p.k, temperature: bits[0]!, top_p: bits[1]!, u: bits[2]! });
}

/** Lanes for `blocks` lists: `lanes` (the top-k layout's workgroup) grown to a power of two that covers them. */
export function samplePickLanes(blocks: number, lanes: number): number {
  let wg = 2 ** Math.ceil(Math.log2(Math.max(1, lanes)));
  while (wg * MAX_LANE_BLOCKS < blocks) wg *= 2;
  if (wg > 256) throw new RangeError(`sample_pick: ${blocks} candidate blocks need ${wg} lanes, more than a workgroup's 256`);
  return wg;
}

export function samplePickOp(cache: PipelineCache, buffers: BufferSet<typeof SAMPLE_PICK.bindings>, blocks: number, lanes = 64): Op {
  return kernelOp(cache, SAMPLE_PICK, {
    label: 'sample pick', consts: { BLOCKS: blocks, WG: samplePickLanes(blocks, lanes) }, buffers, grid: () => [1, 1, 1],
  });
}
