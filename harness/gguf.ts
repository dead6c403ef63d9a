// GGUF harness: resolves ?model= (a .gguf URL, or repo:QUANT against ?hf=), reads the header by Range
// with @huggingface/gguf as bundled for the browser, builds the tokenizer and chat template from the
// metadata, loads every tensor and greedy-generates on the CPU reference engine (ggml blocks and MoE run
// there until their kernels exist; ?engine=wasm runs the WebAssembly engine of src/cpu instead, in its
// worker as the app runs it: the one engine worker (src/model/worker-engine-proxy.ts), the weights read in the worker, the pool's threads
// where the page is cross-origin isolated). Result on window.__gguf = { state: 'done', ids, … } or
// { state: 'error', … }; for wasm also the worker's threads, label and stats, and `ticks`: how often a
// 10 ms setInterval on this page ran while the tokens were generated, `ticksInCalls` of them while an
// engine call was pending (the page stays responsive while the engine computes).
// window.__ggufDispose() disposes the engine (its pool's workers and its worker end).
import type { CpuEngineStats } from '../src/cpu/engine.ts';
import { CpuUnsupportedError } from '../src/cpu/errors.ts';
import { registerRemoteError } from '../src/model/worker-errors.ts';
import { WorkerEngine } from '../src/model/worker-engine-proxy.ts';
import type { LayerEngine } from '../src/model/engine-types.ts';
import { PositionError } from '../src/model/engine-errors.ts';
import { isCpuActivations, isSimdChoice } from '../src/cpu/simd-path.ts';
import { wasmLabel } from '../src/cpu/threads-here.ts';
import { ChatTemplate } from '../src/model/chat-template.ts';
import { loadModelConfig } from '../src/model/config.ts';
import { Generator } from '../src/model/generator.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';

const params = new URLSearchParams(location.search);
const logEl = document.getElementById('log')!;
const w = window as unknown as { __gguf: Record<string, unknown> };
w.__gguf = { state: 'loading' };
const log = (line: string): void => { logEl.textContent += `${line}\n`; };

async function main(): Promise<void> {
  const spec = params.get('model') ?? '';
  const hf = params.get('hf');
  const model = /:/.test(spec) && !/^https?:/.test(spec) ? spec : new URL(spec, location.href).href;
  const hfEndpoint = hf ? { hfEndpoint: new URL(hf, location.href).href } : {};
  const source = await resolveModelSource(model, hfEndpoint);
  const tokenizer = await Tokenizer.fromSource(source);
  const format = ChatTemplate.fromTokenizerConfig(tokenizer.config, 'gguf').format;
  const ids = tokenizer.encode(params.get('prompt') ?? 'def fibonacci(n):');
  const config = await loadModelConfig(source);
  log(`${source.label}: ${config.modelType}, ${config.numLayers} layers, vocab ${tokenizer.vocabSize}, calls ${format}`);
  const ctx = ids.length + Number(params.get('tokens') ?? 16);
  const wasm = params.get('engine') === 'wasm';
  const simd = params.get('simd');   // ?simd=plain|relaxed forces a build; absent: relaxed where the browser has it
  if (simd !== null && !isSimdChoice(simd)) throw new Error(`?simd= must be auto, relaxed or plain, got "${simd}"`);
  // ?cpu-activations=q8, as the app takes it: the worker gets it with its load request
  const act = params.get('cpu-activations');
  if (act !== null && !isCpuActivations(act)) throw new Error(`?cpu-activations= must be f32 or q8, got "${act}"`);
  const layers = { layers: [0, config.numLayers] as [number, number], embedding: true, head: true };
  registerRemoteError(CpuUnsupportedError);   // the WASM engine's refusal arrives as itself
  const worker = wasm
    ? await WorkerEngine.start<CpuEngineStats>({ engine: 'wasm', options: { simd: simd ?? 'auto', 'cpu-activations': act ?? 'f32' }, model, ...hfEndpoint, ...layers, ctx })
    : undefined;
  const engine: LayerEngine = worker ?? new ReferenceEngine(await loadWeights(source, layers), { ctx });
  // The page's timer, counted while an engine call is pending: an engine on this thread computes inside
  // the call before its promise returns, so no timer task can run then (0); one in a worker leaves the
  // thread free while it computes.
  let ticks = 0, ticksInCalls = 0;
  const calls = countPending(engine);
  const ticker = setInterval(() => { ticks++; if (calls.pending > 0) ticksInCalls++; }, 10);
  const result = await new Generator(calls.engine, { ctx }).generate(ids, { maxNewTokens: ctx - ids.length });
  clearInterval(ticker);
  if (result.error) throw result.error;
  log(`ids: ${result.ids.join(' ')}`);
  // An error the worker throws arrives as its own class (a start that does not continue the cache).
  const typedError = worker ? await worker.runLayers([0, 1], 12345, new Float32Array(config.hiddenSize)).then(() => null, (e: Error & { code?: string }) => ({ name: e.name, code: e.code, isPositionError: e instanceof PositionError })) : null;
  const stats = worker ? await worker.stats() : undefined;
  const cpu = worker ? { typedError, threads: stats!.threads, isolated: worker.info.isolated, simd: stats!.simd, label: wasmLabel({ threads: stats!.threads, relaxedSimd: stats!.simd === 'relaxed', isolated: worker.info.isolated, q8: stats!.activations === 'q8' }), stats } : {};
  (window as unknown as { __ggufDispose: () => Promise<void> }).__ggufDispose = () => engine.dispose();
  w.__gguf = {
    state: 'done', modelFile: source.modelFile, prompt: ids, ids: result.ids, format, modelType: config.modelType, vocab: tokenizer.vocabSize,
    engine: wasm ? 'wasm' : 'reference', ticks, ticksInCalls, pageIsolated: crossOriginIsolated, ...cpu,
  };
}

/** The engine with its calls counted while pending (`pending`: calls whose promise has not settled). */
function countPending(engine: LayerEngine): { engine: LayerEngine; pending: number } {
  const out = { engine, pending: 0 };
  out.engine = new Proxy(engine, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== 'function' || key === 'kvLength') return v;
      return (...args: unknown[]) => {
        out.pending++;
        return Promise.resolve((v as (...a: unknown[]) => unknown).apply(target, args)).finally(() => { out.pending--; });
      };
    },
  });
  return out;
}

main().catch((e: Error & { code?: string }) => {
  log(`error: ${e.name}: ${e.message}`);
  w.__gguf = { state: 'error', name: e.name, code: e.code, message: e.message };
});
