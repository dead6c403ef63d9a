// Native llama.cpp (npm node-llama-cpp's prebuilt CPU build) on a GGUF file, for the CPU bench's peer
// figures (never in CI). Run as its own process by bench/cpu/run.ts so llama.cpp's threads and memory
// never share a process with ours:  node bench/cpu/native-peer.mjs <peerDir> <gguf> <threads> <prompt> <gen>
// Prints one JSON line {prefill, decode, decodeUnsampled} (tok/s, the best of three rounds after a warm-up). Prefill: the prompt's ids
// evaluated in one batch. Decode: `gen` greedy tokens, each evaluated with its logits and sampled by
// node-llama-cpp; decodeUnsampled: `gen` more tokens evaluated one at a time without its sampler.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [peerDir, gguf, threadsArg, promptArg, genArg] = process.argv.slice(2);
const threads = Number(threadsArg), prompt = Number(promptArg), gen = Number(genArg);
if (!peerDir || !gguf || !(threads >= 1) || !(prompt >= 1) || !(gen >= 1)) {
  console.error('usage: node native-peer.mjs <peerDir> <gguf> <threads> <prompt> <gen>');
  process.exit(2);
}
const { getLlama } = await import(pathToFileURL(path.join(peerDir, 'node_modules', 'node-llama-cpp', 'dist', 'index.js')).href);
const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });
const ctx = await model.createContext({ contextSize: prompt + gen + 16, batchSize: prompt, threads, sequences: 1 });
const ids = Array.from({ length: prompt }, (_, i) => (i * 7919 + 13) % 150000);
const best = { prefill: 0, decode: 0, decodeUnsampled: 0 };
for (let round = 0; round < 4; round++) {
  const seq = ctx.getSequence();
  const t0 = performance.now();
  await seq.evaluateWithoutGeneratingNewTokens(ids);
  const t1 = performance.now();
  let n = 0;
  for await (const _token of seq.evaluate([ids[prompt - 1]], { temperature: 0 })) { if (++n === gen) break; }
  const t2 = performance.now();
  // the same steps without node-llama-cpp's sampler (each token evaluated alone, as llama-bench's tg)
  for (let i = 0; i < gen; i++) await seq.evaluateWithoutGeneratingNewTokens([ids[i]]);
  const t3 = performance.now();
  if (round > 0) {   // round 0 warms up; the best of the others (a busy machine only ever slows a round down)
    best.prefill = Math.max(best.prefill, prompt / ((t1 - t0) / 1000));
    best.decode = Math.max(best.decode, gen / ((t2 - t1) / 1000));
    best.decodeUnsampled = Math.max(best.decodeUnsampled, gen / ((t3 - t2) / 1000));
  }
  seq.dispose();
}
console.log(JSON.stringify(best));
process.exit(0);
