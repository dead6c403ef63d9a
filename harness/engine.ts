// Engine harness: loads a model into the engine worker (workers/engine.worker.ts) and generates greedy
// tokens through the shared Generator, so e2e tests can compare the browser's WebGPU tokens with the
// reference's. Result on window.__engine = { state: 'done', ids, stats, adapter } or { state: 'error', … }.
import { WorkerEngine } from '../src/gpu/worker-engine.ts';
import { loadModelConfig } from '../src/model/config.ts';
import { Generator } from '../src/model/generator.ts';
import { HttpModelSource } from '../src/model/sources/http.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';

const params = new URLSearchParams(location.search);
const logEl = document.getElementById('log')!;
const w = window as unknown as { __engine: Record<string, unknown> };
w.__engine = { state: 'loading' };
const log = (line: string): void => { logEl.textContent += `${line}\n`; };

async function main(): Promise<void> {
  const model = new URL(params.get('model') ?? '/models/tiny/safetensors', location.href).href;
  const tokens = Number(params.get('tokens') ?? 32);
  const ctx = Number(params.get('ctx') ?? 128);
  const prompt = params.get('prompt') ?? 'def fibonacci(n):';
  const source = new HttpModelSource(model);
  const tokenizer = await Tokenizer.fromSource(source);
  const ids = tokenizer.encode(prompt);
  log(`prompt: ${ids.length} tokens`);
  const config = await loadModelConfig(source);
  const engine = await WorkerEngine.start(
    { model, layers: [0, config.numLayers], embedding: true, head: true, ctx, useF16: params.get('f16') !== '0' },
    (p) => { w.__engine = { state: 'loading', phase: p.phase, bytesDone: p.bytesDone, bytesTotal: p.bytesTotal }; },
  );
  log(`adapter: ${engine.info.adapter.description || engine.info.adapter.vendor} (f16 ${engine.info.adapter.shaderF16})`);
  const result = await new Generator(engine, { ctx }).generate(ids, { maxNewTokens: tokens });
  if (result.error) throw result.error;
  const stats = await engine.stats();
  log(`ids: ${result.ids.join(' ')}`);
  log(`decode ${result.stats.decodeTokensPerSecond.toFixed(2)} tok/s, ${stats.decodeDispatchesPerLayer} dispatches/layer`);
  w.__engine = { state: 'done', prompt: ids, ids: result.ids, finish: result.finish, stats, generation: result.stats, adapter: engine.info.adapter };
  await engine.dispose();
}

main().catch((e: Error & { code?: string }) => {
  log(`error: ${e.name}: ${e.message}`);
  w.__engine = { state: 'error', name: e.name, code: e.code, message: e.message };
});
