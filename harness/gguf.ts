// GGUF harness: resolves ?model= (a .gguf URL, or repo:QUANT against ?hf=), reads the header by Range
// with @huggingface/gguf as bundled for the browser, builds the tokenizer and chat template from the
// metadata, loads every tensor and greedy-generates on the CPU reference engine (ggml blocks and MoE run
// there until their kernels exist; ?engine=wasm runs the WebAssembly engine of src/cpu instead). Result on
// window.__gguf = { state: 'done', ids, … } or { state: 'error', … }.
import { createCpuEngine } from '../src/cpu/create-engine.ts';
import { isSimdChoice } from '../src/cpu/simd-path.ts';
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
  const source = await resolveModelSource(/:/.test(spec) && !/^https?:/.test(spec) ? spec : new URL(spec, location.href).href,
    hf ? { hfEndpoint: new URL(hf, location.href).href } : {});
  const tokenizer = await Tokenizer.fromSource(source);
  const format = ChatTemplate.fromTokenizerConfig(tokenizer.config, 'gguf').format;
  const ids = tokenizer.encode(params.get('prompt') ?? 'def fibonacci(n):');
  const config = await loadModelConfig(source);
  log(`${source.label}: ${config.modelType}, ${config.numLayers} layers, vocab ${tokenizer.vocabSize}, calls ${format}`);
  const weights = await loadWeights(source, { layers: [0, config.numLayers], embedding: true, head: true });
  const ctx = ids.length + Number(params.get('tokens') ?? 16);
  const wasm = params.get('engine') === 'wasm';
  const simd = params.get('simd');   // ?simd=plain|relaxed forces a build; absent: relaxed where the browser has it
  if (simd !== null && !isSimdChoice(simd)) throw new Error(`?simd= must be auto, relaxed or plain, got "${simd}"`);
  const cpu = wasm ? await createCpuEngine(weights, { ctx, simd: simd ?? 'auto' }) : undefined;
  const engine = cpu ?? new ReferenceEngine(weights, { ctx });
  const result = await new Generator(engine, { ctx }).generate(ids, { maxNewTokens: ctx - ids.length });
  if (result.error) throw result.error;
  log(`ids: ${result.ids.join(' ')}`);
  w.__gguf = { state: 'done', modelFile: source.modelFile, prompt: ids, ids: result.ids, format, modelType: config.modelType, vocab: tokenizer.vocabSize, engine: wasm ? 'wasm' : 'reference', simd: cpu?.stats().simd ?? null };
}

main().catch((e: Error & { code?: string }) => {
  log(`error: ${e.name}: ${e.message}`);
  w.__gguf = { state: 'error', name: e.name, code: e.code, message: e.message };
});
