// npm run generate -- --model DIR|URL|HF-ID|FILE.gguf --prompt TEXT | --prompt-ids 1,2,3 [--chat] [--max-new-tokens N]
//   [--temperature T] [--top-k K] [--top-p P] [--seed S] [--backend reference|webgpu|wasm] [--ctx N] [--kv f16|q8_0] [--json]
//   [--speculate lookup|draft:MODEL [--max-draft K] [--draft-length K|auto]]
// Loads the whole model, encodes the prompt with the model's own tokenizer (with --chat: rendered as one
// user turn through its chat template, thinking off), generates, and prints the ids, the text and stats.
// --prompt-ids feeds token ids as they are (no tokenizer, no template): for exact comparisons with
// other implementations (llama.cpp, transformers) on the same ids.
// --json prints exactly one JSON object {"ids": [...], "text": "...", "stats": {...}} on stdout.
// --speculate lookup drafts with prompt lookup, --speculate draft:MODEL with a small draft model of the same
// tokenizer (any model source --model takes, loaded whole on the same backend), and checks the drafts in
// one pass (greedy: the tokens of plain decoding; sampling: the same distribution); stats then add
// drafted, accepted and passes. A draft model drafts as many tokens a pass as it finds pays (auto: from
// how often its drafts were kept and how long a drafted token takes against a pass), at most --max-draft;
// --draft-length K fixes it (a sampled answer repeats for its --seed only at a fixed length).
// Exit codes: 0 done, 1 failed (model, engine), 2 bad usage or backend not available.

import { isKvCacheType, KV_CACHE_TYPES, type KvCacheType } from '../src/model/kv-quant.ts';
import { parseArgs } from 'node:util';
import { ChatTemplate } from '../src/model/chat-template.ts';
import { loadModelConfig } from '../src/model/config.ts';
import type { LayerEngine } from '../src/model/engine-types.ts';
import { Generator } from '../src/model/generator.ts';
import type { GenerationResult } from '../src/model/generate-types.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { DraftModelDrafter } from '../src/model/speculative/draft-model.ts';
import { PromptLookupDrafter } from '../src/model/speculative/prompt-lookup.ts';
import type { Drafter } from '../src/model/speculative/types.ts';
import { checkSameVocabulary, vocabularyOf } from '../src/model/speculative/vocabulary.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';
import type { ModelWeights } from '../src/model/types.ts';

const USAGE = `usage: npm run generate -- --model DIR|URL|HF-ID --prompt TEXT [options]
  --model M            a local folder or .gguf file, an http(s) base URL or .gguf URL, a Hugging Face id
                       (owner/name[@revision]), or owner/name:QUANT for a GGUF repo (Qwen/Qwen3-8B-GGUF:Q4_K_M)
  --prompt TEXT        the prompt (raw text; with --chat, the user's message)
  --prompt-ids IDS     the prompt as comma-separated token ids instead (no tokenizer, no template)
  --chat               render the prompt as a user turn with the model's chat template (thinking off)
  --max-new-tokens N   answer cap (default 32)
  --temperature T      0 = greedy (default 0)
  --top-k K            keep the K most likely tokens (default off)
  --top-p P            nucleus sampling threshold in (0, 1] (default off)
  --seed S             sampling seed (default: random when sampling; printed in stats)
  --backend B          reference (CPU, default) | webgpu (Dawn in Node) | wasm (the WebAssembly SIMD engine, src/cpu)
  --cpu-activations A  with --backend wasm: f32 (default: exact, weights decoded to f32) or q8 (activations
                       quantized per 32 values, integer dot products for Q8_0/Q4_0/Q4_K/Q6_K: faster, not exact)
  --ctx N              context size in tokens (default: prompt + max-new-tokens, at most the model's)
  --kv T               KV cache type: f16 (default) or q8_0 (llama.cpp's 8-bit blocks, about half the bytes)
  --json               print one JSON object {"ids", "text", "stats"} and nothing else on stdout
  --speculate lookup   speculative decoding with prompt-lookup drafts (same tokens; stats add drafted, accepted, passes)
  --speculate draft:M  speculative decoding with drafts from a small model M of the same tokenizer (any source
                       --model takes, e.g. draft:Qwen/Qwen3-0.6B for Qwen/Qwen3-8B), loaded whole on the same backend
  --max-draft K        most drafted tokens per pass with --speculate (default 7)
  --draft-length K     with draft:M, draft K tokens a pass (at most --max-draft) instead of auto, which chooses
                       from the measured agreement and timing (default auto; a sampled answer repeats for its
                       --seed only at a fixed length)`;

function fail(code: number, message: string, usage = false): never {
  process.stderr.write(`generate: ${message}\n${usage ? `${USAGE}\n` : ''}`);
  process.exit(code);
}

function numberOption(name: string, v: string | undefined, check: (n: number) => boolean, what: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || !check(n)) fail(2, `--${name} needs ${what}, got "${v}"`, true);
  return n;
}

interface Args {
  model: string; prompt?: string; promptIds?: number[]; chat: boolean; maxNewTokens: number; temperature: number; topK?: number;
  topP?: number; seed?: number; backend: 'reference' | 'webgpu' | 'wasm'; ctx?: number; kv?: KvCacheType; json: boolean;
  speculate?: 'lookup' | { draft: string }; maxDraft?: number; draftLength?: number | 'auto'; cpuActivations?: 'f32' | 'q8';
}

function parse(): Args {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        model: { type: 'string' }, prompt: { type: 'string' }, 'prompt-ids': { type: 'string' }, chat: { type: 'boolean' },
        'max-new-tokens': { type: 'string' }, temperature: { type: 'string' }, 'top-k': { type: 'string' },
        'top-p': { type: 'string' }, seed: { type: 'string' }, backend: { type: 'string' }, 'cpu-activations': { type: 'string' }, ctx: { type: 'string' }, kv: { type: 'string' },
        json: { type: 'boolean' }, speculate: { type: 'string' }, 'max-draft': { type: 'string' }, 'draft-length': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    fail(2, (e as Error).message, true);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const str = (k: string): string | undefined => values[k] as string | undefined;
  const model = str('model');
  const prompt = str('prompt');
  const idsArg = str('prompt-ids');
  if (!model) fail(2, '--model is required', true);
  if ((prompt === undefined) === (idsArg === undefined)) fail(2, 'give exactly one of --prompt and --prompt-ids', true);
  let promptIds: number[] | undefined;
  if (idsArg !== undefined) {
    const parts = idsArg.split(',').map((x) => x.trim());
    if (parts.some((x) => !/^\d+$/.test(x))) fail(2, `--prompt-ids needs comma-separated token ids, got "${idsArg}"`, true);
    promptIds = parts.map(Number);
    if (values.chat) fail(2, '--chat renders text: it cannot be used with --prompt-ids', true);
  }
  const backend = str('backend') ?? 'reference';
  if (backend !== 'reference' && backend !== 'webgpu' && backend !== 'wasm') fail(2, `--backend must be reference, webgpu or wasm, got "${backend}"`, true);
  const whole = (n: number): boolean => Number.isInteger(n) && n >= 0;
  const args: Args = {
    model, ...(prompt !== undefined ? { prompt } : {}), ...(promptIds ? { promptIds } : {}), chat: values.chat === true, json: values.json === true, backend,
    maxNewTokens: numberOption('max-new-tokens', str('max-new-tokens'), whole, 'a whole number') ?? 32,
    temperature: numberOption('temperature', str('temperature'), (n) => n >= 0, 'a number >= 0') ?? 0,
  };
  const topK = numberOption('top-k', str('top-k'), whole, 'a whole number');
  const topP = numberOption('top-p', str('top-p'), (n) => n > 0 && n <= 1, 'a number in (0, 1]');
  const seed = numberOption('seed', str('seed'), (n) => Number.isInteger(n) && n >= 0 && n < 2 ** 32, 'a whole number below 2^32');
  const ctx = numberOption('ctx', str('ctx'), (n) => Number.isInteger(n) && n > 0, 'a positive whole number');
  if (topK !== undefined) args.topK = topK;
  if (topP !== undefined) args.topP = topP;
  if (seed !== undefined) args.seed = seed;
  if (ctx !== undefined) args.ctx = ctx;
  const act = str('cpu-activations');
  if (act !== undefined) {
    if (act !== 'f32' && act !== 'q8') fail(2, `--cpu-activations must be f32 or q8, got "${act}"`, true);
    if (backend !== 'wasm') fail(2, '--cpu-activations applies to --backend wasm only', true);
    args.cpuActivations = act;
  }
  const kv = str('kv');
  if (kv !== undefined) {
    if (!isKvCacheType(kv)) fail(2, `--kv must be ${KV_CACHE_TYPES.join(' or ')}, got "${kv}"`, true);
    args.kv = kv;
  }
  const speculate = str('speculate');
  if (speculate !== undefined) {
    if (speculate.startsWith('draft:')) {
      const draft = speculate.slice('draft:'.length).trim();
      if (!draft) fail(2, '--speculate draft:MODEL needs a model after "draft:" (a folder, file, URL or Hugging Face id)', true);
      args.speculate = { draft };
    } else if (speculate === 'lookup') {
      args.speculate = 'lookup';
    } else {
      fail(2, `--speculate must be lookup or draft:MODEL, got "${speculate}"`, true);
    }
  }
  const maxDraft = numberOption('max-draft', str('max-draft'), (n) => Number.isInteger(n) && n >= 1 && n <= 64, 'a whole number in 1..64');
  if (maxDraft !== undefined) {
    if (!args.speculate) fail(2, '--max-draft needs --speculate', true);
    args.maxDraft = maxDraft;
  }
  const draftLength = str('draft-length');
  if (draftLength !== undefined) {
    if (typeof args.speculate !== 'object') fail(2, '--draft-length needs --speculate draft:MODEL', true);
    args.draftLength = draftLength === 'auto' ? 'auto'
      : numberOption('draft-length', draftLength, (n) => Number.isInteger(n) && n >= 1 && n <= 64, 'auto or a whole number in 1..64')!;
  }
  return args;
}

type CreateWebGPUEngine = (weights: ModelWeights, opts: { ctx: number; kv?: KvCacheType }) => Promise<LayerEngine>;

/** The WebGPU engine arrives with the kernels issue; until then say so instead of a stack trace. */
async function webgpuFactory(): Promise<CreateWebGPUEngine> {
  const path = '../src/gpu/create-engine.ts';
  let mod: { createWebGPUEngine?: CreateWebGPUEngine };
  try {
    mod = (await import(/* @vite-ignore */ path)) as typeof mod;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ERR_MODULE_NOT_FOUND' && err.message.includes('create-engine')) {
      fail(2, '--backend webgpu is not available yet: the WebGPU engine (src/gpu/create-engine.ts) arrives with the kernels issue. Use --backend reference.');
    }
    throw e;
  }
  if (typeof mod.createWebGPUEngine !== 'function') fail(2, 'src/gpu/create-engine.ts does not export createWebGPUEngine(weights, {ctx})');
  return mod.createWebGPUEngine;
}

/** The WASM engine (src/cpu); its kernels compile from src/cpu/asm/ on first use (cached). */
async function wasmFactory(activations?: 'f32' | 'q8'): Promise<CreateWebGPUEngine> {
  const { createCpuEngine } = await import('../src/cpu/create-engine.ts');
  return (weights, opts) => createCpuEngine(weights, { ...opts, ...(activations ? { activations } : {}) });
}

/**
 * The draft model of --speculate draft:MODEL, whole, on the target's backend. Its tokenizer is checked
 * against the target's before its weights are read: another vocabulary exits 2 naming the difference.
 */
async function loadDraftModel(name: string, target: ReturnType<typeof vocabularyOf>, ctx: number, draftLength: number | 'auto', createWebGPU: CreateWebGPUEngine | undefined): Promise<{ drafter: DraftModelDrafter; label: string }> {
  const source = await resolveModelSource(name);
  const config = await loadModelConfig(source);
  const vocabulary = { target, draft: vocabularyOf(config, await Tokenizer.fromSource(source)) };
  try {
    checkSameVocabulary(vocabulary.target, vocabulary.draft, `draft model ${source.label}`);
  } catch (e) {
    fail(2, `${(e as Error).name}: ${(e as Error).message}`);
  }
  if (config.hybrid) fail(2, `draft model ${source.label}: a hybrid model (recurrent layers) cannot be a draft model; take an attention-only one`);
  const weights = await loadWeights(source, { layers: [0, config.numLayers], embedding: true, head: true });
  const draftCtx = Math.min(config.maxPositionEmbeddings, ctx);
  const engine = createWebGPU ? await createWebGPU(weights, { ctx: draftCtx }) : new ReferenceEngine(weights, { ctx: draftCtx });
  return { drafter: new DraftModelDrafter(engine, { ctx: draftCtx, vocabulary, label: source.label, draftLength }), label: source.label };
}

function printHuman(result: GenerationResult, text: string, stats: Record<string, unknown>): void {
  const s = result.stats;
  const out = process.stdout;
  out.write(`ids: ${JSON.stringify(result.ids)}\n`);
  out.write(`text: ${JSON.stringify(text)}\n`);
  out.write(`finish: ${result.finish}${result.stopToken === undefined ? '' : ` (token ${result.stopToken})`}\n`);
  out.write(`prompt: ${s.promptTokens} tokens (${s.promptComputed} computed, ${s.promptReused} reused)\n`);
  out.write(`generated: ${s.generated} tokens\n`);
  out.write(`prefill: ${s.prefillTokensPerSecond.toFixed(1)} tok/s, decode: ${s.decodeTokensPerSecond.toFixed(1)} tok/s, `
    + `${s.seconds.toFixed(2)} s (load ${Number(stats.loadSeconds).toFixed(2)} s)\n`);
  out.write(`backend: ${stats.backend}, model: ${stats.model}, ctx: ${stats.ctx}, seed: ${s.seed}\n`);
  if (s.passes !== undefined) {
    out.write(`speculation: ${s.accepted} of ${s.drafted} drafted tokens accepted in ${s.passes} passes${s.speculationOff ? ` (off: ${s.speculationOff})` : ''}\n`);
    if (stats.draftModel) {
      const length = stats.draftLength === 'auto' ? 'chosen from measurements' : `fixed at ${String(stats.draftLength)}`;
      const perPass = s.passes > 0 ? (s.drafted ?? 0) / s.passes : 0;
      out.write(`draft model: ${stats.draftModel}${stats.draftFailure ? ` (failed, turned off: ${stats.draftFailure})` : ''}\n`);
      out.write(`draft length: ${length}, ${perPass.toFixed(2)} drafted a pass\n`);
    }
  }
}

async function main(): Promise<void> {
  const args = parse();
  const createWebGPU = args.backend === 'webgpu' ? await webgpuFactory() : args.backend === 'wasm' ? await wasmFactory(args.cpuActivations) : undefined;
  const t0 = performance.now();
  const source = await resolveModelSource(args.model);
  const tokenizer = await Tokenizer.fromSource(source);
  const text = args.promptIds ? '' : args.chat
    ? ChatTemplate.fromTokenizerConfig(tokenizer.config, source.modelFile ? `${source.label} (GGUF metadata)` : `${source.label}/tokenizer_config.json`)
      .render([{ role: 'user', content: args.prompt! }], [])
    : args.prompt!;
  const prompt = args.promptIds ?? tokenizer.encode(text);
  if (prompt.length === 0) fail(2, '--prompt encodes to no tokens');
  const { numLayers, vocabSize } = await loadModelConfig(source);
  const bad = prompt.find((id) => id >= vocabSize);
  if (bad !== undefined) fail(2, `--prompt-ids: token id ${bad} is outside the model's vocabulary of ${vocabSize}`);
  const weights = await loadWeights(source, { layers: [0, numLayers], embedding: true, head: true });
  const config = weights.config;
  const ctx = args.ctx ?? Math.min(config.maxPositionEmbeddings, prompt.length + Math.max(1, args.maxNewTokens));
  const kv = args.kv ?? 'f16';
  const engine = createWebGPU ? await createWebGPU(weights, { ctx, kv }) : new ReferenceEngine(weights, { ctx, kvType: kv });
  const draftModel = typeof args.speculate === 'object'
    ? await loadDraftModel(args.speculate.draft, vocabularyOf(config, tokenizer), ctx + (args.maxDraft ?? 7), args.draftLength ?? 'auto', createWebGPU)
    : undefined;
  const loadSeconds = (performance.now() - t0) / 1000;

  const stopTokens = [...new Set([...config.eosTokenIds, ...(args.chat ? tokenizer.stopTokenIds() : [])])];
  const sampling = { temperature: args.temperature, ...(args.topK === undefined ? {} : { topK: args.topK }),
    ...(args.topP === undefined ? {} : { topP: args.topP }), ...(args.seed === undefined ? {} : { seed: args.seed }) };
  const drafter: Drafter | undefined = draftModel?.drafter ?? (args.speculate === 'lookup' ? new PromptLookupDrafter() : undefined);
  const speculate = drafter ? { speculate: { drafter, ...(args.maxDraft ? { maxDraft: args.maxDraft } : {}) } } : {};
  const result = await new Generator(engine, { ctx }).generate(prompt, { maxNewTokens: args.maxNewTokens, stopTokens, sampling, ...speculate });
  await engine.dispose();
  await draftModel?.drafter.engine.dispose();
  if (result.finish === 'error') throw result.error ?? new Error('generation failed');

  const answer = tokenizer.decode(result.ids);
  const stats = {
    finish: result.finish, ...(result.stopToken === undefined ? {} : { stopToken: result.stopToken }), ...result.stats,
    promptIds: prompt, loadSeconds, backend: args.backend, model: source.label, format: weights.format, ctx, kv,
    ...(draftModel ? { draftModel: draftModel.label, draftLength: draftModel.drafter.draftLength, draftAgreement: draftModel.drafter.estimate.agreement } : {}),
    ...(draftModel?.drafter.failure ? { draftFailure: `${draftModel.drafter.failure.name}: ${draftModel.drafter.failure.message}` } : {}),
  };
  if (args.json) process.stdout.write(`${JSON.stringify({ ids: result.ids, text: answer, stats })}\n`);
  else printHuman(result, answer, stats);
}

main().then(
  () => process.exit(0), // Dawn keeps Node alive otherwise
  (e: unknown) => {
    const err = e as Error;
    fail(1, `${err.name ?? 'Error'}: ${err.message ?? String(e)}`);
  },
);
