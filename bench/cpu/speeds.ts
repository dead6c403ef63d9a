// The CPU bench's one measurement, shared by Node (./run.ts) and the bench page's worker
// (harness/cpu-worker.ts): prefill the prompt in one batch and pick the first token, then `gen` greedy
// decode tokens; tok/s of each. The ids' values do not change the work, only their count.
import { decodeNext, sampleNext, type LayerEngine } from '../../src/model/engine-types.ts';

export interface Speeds { prefill: number; decode: number }

export async function speeds(engine: LayerEngine, numLayers: number, promptIds: number[], gen: number): Promise<Speeds> {
  const t0 = performance.now();
  let next = await sampleNext(engine, await engine.runLayers([0, numLayers], 0, await engine.embed(promptIds)), { temperature: 0 });
  const t1 = performance.now();
  for (let i = 0; i < gen; i++) next = await decodeNext(engine, next, { temperature: 0 });
  const t2 = performance.now();
  return { prefill: promptIds.length / ((t1 - t0) / 1000), decode: gen / ((t2 - t1) / 1000) };
}
