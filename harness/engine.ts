// Engine harness: loads a model into the WebGPU engine in the one engine worker (workers/engine.worker.ts) and generates greedy
// tokens through the shared Generator, so e2e tests can compare the browser's WebGPU tokens with the
// reference's (?model= a folder or a .gguf URL; ?ids=1,2,3 a prompt of token ids). Result on window.__engine = { state: 'done', ids, stats, adapter } or { state: 'error', … }.
// ?profile=N also times N decode steps each way the app can take one (see profileDecode) and the same
// model's CPU reference in the page: window.__engine.profile, milliseconds per token (medians).
// &compare=WGxITEMS starts a second engine whose head uses that top-k layout and times the two in turn.
import { requestAdapter, summarizeAdapter } from '../src/gpu/adapter.ts';
import type { EngineStats } from '../src/gpu/engine.ts';
import { WorkerEngine } from '../src/model/worker-engine-proxy.ts';
import { loadModelConfig } from '../src/model/config.ts';
import { Generator } from '../src/model/generator.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';
import type { ModelSource } from '../src/model/types.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { decodeNext, sampleNext } from '../src/model/engine-types.ts';

const params = new URLSearchParams(location.search);
const logEl = document.getElementById('log')!;
const w = window as unknown as { __engine: Record<string, unknown> };
w.__engine = { state: 'loading' };
const log = (line: string): void => { logEl.textContent += `${line}\n`; };

/** The WebGPU row's bench settings from this page's URL: ?f16=0 forces the f32 path. */
const gpuOptions = (): Record<string, string> => (params.get('f16') === '0' ? { f16: 'off' } : {});

async function main(): Promise<void> {
  const model = new URL(params.get('model') ?? '/models/tiny/safetensors', location.href).href;
  const tokens = Number(params.get('tokens') ?? 32);
  const ctx = Number(params.get('ctx') ?? 128);
  const prompt = params.get('prompt') ?? 'def fibonacci(n):';
  const source = await resolveModelSource(model);   // a folder (safetensors, MLC) or a .gguf file
  const tokenizer = await Tokenizer.fromSource(source);
  const idsParam = params.get('ids');                 // token ids instead of text, for exact goldens
  const ids = idsParam ? idsParam.split(',').map(Number) : tokenizer.encode(prompt);
  log(`prompt: ${ids.length} tokens`);
  const config = await loadModelConfig(source);
  const engine = await WorkerEngine.start<EngineStats>(
    { engine: 'webgpu', options: gpuOptions(), model, layers: [0, config.numLayers], embedding: true, head: true, ctx },
    { onProgress: (p) => { w.__engine = { state: 'loading', phase: 'fetch', bytesDone: p.bytesDone, bytesTotal: p.bytesTotal }; } },
  );
  const adapter = summarizeAdapter(await requestAdapter());   // the page's: the worker's engine asks the same browser
  log(`adapter: ${adapter.description || adapter.vendor} (f16 ${adapter.shaderF16})`);
  const result = await new Generator(engine, { ctx }).generate(ids, { maxNewTokens: tokens });
  if (result.error) throw result.error;
  const stats = await engine.stats();
  log(`ids: ${result.ids.join(' ')}`);
  log(`decode ${result.stats.decodeTokensPerSecond.toFixed(2)} tok/s, ${stats.decodeDispatchesPerLayer} dispatches/layer`);
  const profileSteps = Number(params.get('profile') ?? 0);
  const profile = profileSteps > 0 ? await profileDecode(engine, source, model, config.numLayers, config.vocabSize, profileSteps, ctx) : undefined;
  w.__engine = { state: 'done', modelType: config.modelType, prompt: ids, ids: result.ids, finish: result.finish, stats, generation: result.stats, adapter, profile };
  await engine.dispose();
}

/**
 * Milliseconds per decode step, median of `n`, each way the app can take one: the round trip alone (a
 * one-row embed: one submit, one tiny read-back, one worker message), the layers alone, the head with
 * its pick (greedy; top-20; under a vocabulary mask; with the overrule check the agent asks for), the
 * fused decodeToken as the app calls it, and the CPU reference engine's decode step in this page.
 */
async function profileDecode(engine: WorkerEngine<EngineStats>, source: ModelSource, model: string, numLayers: number, vocab: number, n: number, ctx: number): Promise<Record<string, number>> {
  const at = engine.kvLength();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const time = async (fn: () => Promise<unknown>): Promise<number> => {
    await fn();
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await fn();
      xs.push(performance.now() - t0);
    }
    return median(xs);
  };
  const bits = new Uint32Array(Math.ceil(vocab / 32)).fill(0xffffffff);
  const agent = { temperature: 0.7, topP: 0.8, topK: 20, seed: 1 };
  const hidden = await engine.embed([5]);
  const out: Record<string, number> = {};
  out['round trip (1-row embed)'] = await time(() => engine.embed([5]));
  out['logits read back (whole vocabulary)'] = await time(() => engine.logits(hidden));
  out['head + argmax'] = await time(() => sampleNext(engine, hidden, { temperature: 0 }));
  out['head + top-20'] = await time(() => sampleNext(engine, hidden, agent));
  out['head + top-20, masked'] = await time(() => sampleNext(engine, hidden, agent, { bits }));
  out['head + top-20, masked, overrule check'] = await time(() => sampleNext(engine, hidden, agent, { bits, overruled: () => undefined }));
  out['layers (1 token)'] = await time(async () => { await engine.truncate(at); await engine.runLayers([0, numLayers], at, hidden); });
  out['decodeToken greedy'] = await time(async () => { await engine.truncate(at); await decodeNext(engine, 5, { temperature: 0 }); });
  out['decodeToken as the agent (top-20, mask, overrule check)'] = await time(async () => { await engine.truncate(at); await decodeNext(engine, 5, agent, { bits, overruled: () => undefined }); });
  const weights = await loadWeights(source, { layers: [0, numLayers], embedding: true, head: true });
  const reference = new ReferenceEngine(weights, { ctx });
  const prompt = Array.from({ length: at }, (_, i) => 1000 + i);
  await reference.runLayers([0, numLayers], 0, await reference.embed(prompt));
  out['CPU reference decodeToken as the agent'] = await time(async () => { await reference.truncate(at); await decodeNext(reference, 5, agent, { bits, overruled: () => undefined }); });
  await reference.dispose();
  const compare = /^(\d+)x(\d+)$/.exec(params.get('compare') ?? '');
  if (compare) {
    const layout = { WG: Number(compare[1]), ITEMS: Number(compare[2]) };
    const other = await WorkerEngine.start<EngineStats>({ engine: 'webgpu', options: { ...gpuOptions(), topk: `${layout.WG}x${layout.ITEMS}` }, model, layers: [0, numLayers], embedding: true, head: true, ctx });
    const prompt2 = Array.from({ length: at }, (_, i) => 1000 + i);
    await other.runLayers([0, numLayers], 0, await other.embed(prompt2));
    const mine = (await engine.stats()).kernels.match(/top-k (\S+)/)?.[1] ?? 'default';
    const theirs = `wg${layout.WG}×${layout.ITEMS}`;
    const step = (e: WorkerEngine<EngineStats>, greedy: boolean) => async () => {
      await e.truncate(at);
      await decodeNext(e, 5, greedy ? { temperature: 0 } : agent, greedy ? undefined : { bits, overruled: () => undefined });
    };
    // In turn, so the machine's load falls on both alike.
    const xs: Record<string, number[]> = {};
    for (const greedy of [false, true]) {
      for (const [, e] of [[mine, engine], [theirs, other]] as const) await step(e, greedy)();
      for (let i = 0; i < n; i++) {
        for (const [name, e] of [[mine, engine], [theirs, other]] as const) {
          const t0 = performance.now();
          await step(e, greedy)();
          (xs[`decodeToken ${greedy ? 'greedy' : 'as the agent'}, top-k ${name}`] ??= []).push(performance.now() - t0);
        }
      }
    }
    for (const [k, v] of Object.entries(xs)) out[k] = median(v);
    await other.dispose();
  }
  return out;
}

main().catch((e: Error & { code?: string }) => {
  log(`error: ${e.name}: ${e.message}`);
  w.__engine = { state: 'error', name: e.name, code: e.code, message: e.message };
});
