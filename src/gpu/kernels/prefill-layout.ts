// The layout of the skinny prefill matmuls (shaders/matmul_*.wgsl): 4 tokens per workgroup; on CPU
// rasterizers one invocation per row, on GPUs up to 32 invocations sharing a row.
import type { PipelineCache } from '../pipelines.ts';

export const PREFILL_TILE = 4;

export function prefillLanes(cache: PipelineCache, rowWords: number): { WG: number; LANES: number } {
  if (cache.tuning.adapterClass === 'cpu') return { WG: 64, LANES: 1 };
  let lanes = 1;
  while (lanes * 2 <= 32 && lanes * 2 * 8 <= rowWords) lanes *= 2;
  return { WG: 128, LANES: lanes };
}
