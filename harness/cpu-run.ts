// What the CPU harness pages run, on a page's main thread (one thread) or in ./cpu-worker.ts (a pool of
// `threads`): load a model by URL (a safetensors or MLC folder, or a .gguf file) into the WASM engine of
// src/cpu, then greedy tokens through the shared Generator, or the CPU bench's speeds.
import { createCpuEngine } from '../src/cpu/create-engine.ts';
import type { CpuEngine } from '../src/cpu/engine.ts';
import { loadModelConfig } from '../src/model/config.ts';
import { Generator } from '../src/model/generator.ts';
import { openWeights } from '../src/model/load-weights.ts';
import type { SimdChoice } from '../src/cpu/simd-path.ts';
import type { CpuActivations } from '../src/cpu/wasm-kernels.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { speeds, type Speeds } from '../bench/cpu/speeds.ts';

/** simd: the kernels' build (absent: auto, relaxed SIMD where this browser validates it). */
export interface GreedyRequest { model: string; ids: number[]; tokens: number; threads: number; simd?: SimdChoice }
export interface GreedyResult { ids: number[]; finish: string; engine: string; threads: number; simd: string; modelType: string }

/** A whole model (every layer, embedding, head) on the WASM engine with room for ids + tokens. */
export async function loadCpuEngine(model: string, ctx: number, threads: number, simd: SimdChoice = 'auto', activations?: CpuActivations): Promise<{ engine: CpuEngine; numLayers: number; modelType: string }> {
  const source = await resolveModelSource(model);
  const config = await loadModelConfig(source);
  // streamed, as a room's device loads its share: the matrices go straight into the WASM memory
  const weights = await openWeights(source, { layers: [0, config.numLayers], embedding: true, head: true });
  return { engine: await createCpuEngine(weights, { ctx, threads, simd, ...(activations ? { activations } : {}) }), numLayers: config.numLayers, modelType: config.modelType };
}

export async function cpuGreedy(r: GreedyRequest): Promise<GreedyResult> {
  const ctx = r.ids.length + r.tokens;
  const { engine, modelType } = await loadCpuEngine(r.model, ctx, r.threads, r.simd);
  try {
    const result = await new Generator(engine, { ctx }).generate(r.ids, { maxNewTokens: r.tokens });
    if (result.error) throw result.error;
    const s = engine.stats();
    return { ids: result.ids, finish: result.finish, engine: s.engine, threads: s.threads, simd: s.simd, modelType };
  } finally {
    await engine.dispose();
  }
}

/** One engine kept loaded between bench rounds (the peers run between them). */
export class CpuBenchEngine {
  private constructor(private readonly engine: CpuEngine, private readonly numLayers: number) {}

  /** activations: the linears' path (absent: the engine's default). */
  static async load(model: string, ctx: number, threads: number, activations?: CpuActivations): Promise<CpuBenchEngine> {
    const { engine, numLayers } = await loadCpuEngine(model, ctx, threads, 'auto', activations);
    return new CpuBenchEngine(engine, numLayers);
  }

  /** A warm-up of 2 decode tokens (JIT, memory growth), then the timed round from an empty cache. */
  async round(promptIds: number[], gen: number): Promise<Speeds & { threads: number }> {
    await this.engine.truncate(0);
    await speeds(this.engine, this.numLayers, promptIds, 2);
    await this.engine.truncate(0);
    return { ...(await speeds(this.engine, this.numLayers, promptIds, gen)), threads: this.engine.stats().threads };
  }

  dispose(): Promise<void> { return this.engine.dispose(); }
}
