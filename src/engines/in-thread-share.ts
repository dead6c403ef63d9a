// A share loaded on this thread: the weights read here (loadWeights), then the engine made of them
// (create). The rows whose engine runs on the page's own thread (WebGPU, the reference) load this way,
// and so does the WASM engine where it has no worker (Node: tests, the CLI). Between the two steps the
// device frees its previous share (beforeCreate), so two shares never sit in memory at once.
import type { EngineFactory, LoadWeightsFn, ShareLoadFn } from './contract.ts';

export function inThreadShare(loadWeights: LoadWeightsFn, create: EngineFactory): ShareLoadFn {
  return async ({ source, request, ctx, kv, step, beforeCreate }) => {
    const weights = await loadWeights(source, request);
    if (beforeCreate && !(await beforeCreate())) return null;
    const engine = await create(weights, { ctx, range: request.layers, ...(kv ? { kv } : {}), ...(step !== undefined ? { step } : {}) });
    return { engine, hiddenSize: weights.config.hiddenSize, counts: { networkBytes: 0, cacheBytes: 0 } };
  };
}
