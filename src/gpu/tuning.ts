// How the linear kernels are shaped for an adapter: GPUs and CPU rasterizers want different layouts.

/** Tunables of the linear kernels. */
export interface MatvecTuning {
  WG: number;                  // invocations per workgroup
  WORDS_PER_LANE: number;      // aim for this many weight words per invocation when choosing LANES
  MAX_LANES: number;           // invocations sharing a row (1: one invocation streams a whole row)
}

/** Tokens per workgroup: decode (one token) and prefill (vec4 tiles). */
export const TILES = { decode: { TILE_T: 1 }, prefill: { TILE_T: 4 } };

/** GPUs: up to 32 invocations share a row, so neighbouring invocations read neighbouring words. */
export const GPU_TUNING: MatvecTuning = { WG: 128, WORDS_PER_LANE: 8, MAX_LANES: 32 };
/**
 * CPU rasterizers (lavapipe, SwiftShader): SIMD lanes run across invocations, so one invocation per row
 * (no reduction) measured fastest on lavapipe (bench/kernels.bench.ts).
 */
export const CPU_TUNING: MatvecTuning = { WG: 64, WORDS_PER_LANE: 8, MAX_LANES: 1 };

/** True for software adapters (fallback, llvmpipe, SwiftShader). */
export function isSoftwareDevice(device: GPUDevice): boolean {
  const info = (device as unknown as { adapterInfo?: GPUAdapterInfo & { isFallbackAdapter?: boolean } }).adapterInfo;
  if (!info) return false;
  return info.isFallbackAdapter === true
    || /llvmpipe|lavapipe|swiftshader|software/i.test(`${info.vendor} ${info.architecture} ${info.device} ${info.description}`);
}

export function defaultTuning(device: GPUDevice): MatvecTuning {
  return isSoftwareDevice(device) ? CPU_TUNING : GPU_TUNING;
}

/** Invocations per row: a power of two, so small K packs many rows into one workgroup. */
export function lanesFor(rowWords: number, t: MatvecTuning): number {
  let lanes = 1;
  while (lanes * 2 <= t.MAX_LANES && lanes * 2 * t.WORDS_PER_LANE <= rowWords) lanes *= 2;
  return lanes;
}

