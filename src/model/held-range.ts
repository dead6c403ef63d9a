// The layer range an engine holds, read off the weights it was given (an engine of any kind: the WebGPU
// one, the WASM one): their layers' indices, which must be contiguous; none with a head is the range
// [L, L) after the last layer (a head-only device), none at all [0, 0).
import { EngineUsageError } from './engine-errors.ts';
import type { LayerRange } from './engine-types.ts';
import type { ModelWeights } from './types.ts';

/** `who` names the engine's maker in the error ("createCpuEngine"). */
export function heldLayerRange(weights: ModelWeights, hasHead: boolean, who: string): LayerRange {
  const idx = [...weights.layers.keys()].sort((a, b) => a - b);
  if (idx.length === 0) return hasHead ? [weights.config.numLayers, weights.config.numLayers] : [0, 0];
  idx.forEach((v, i) => {
    if (v !== idx[0]! + i) throw new EngineUsageError(`${who}: layers ${idx.join(', ')} are not a contiguous range`);
  });
  return [idx[0]!, idx[idx.length - 1]! + 1];
}
