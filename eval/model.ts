// What the eval runs the agent on. Each kind gives the model's tokenizer and chat template (so the agent
// renders the model's own turns and grammar) and a fresh Backend per task run:
//   replay  — the scripted answers of each task (the right one, or a broken one), sampled through the
//             real tokenizer and call grammar: proves the checks pass on a right answer, fail on a wrong one;
//   openai  — an OpenAI-compatible server (llama.cpp, Ollama, vLLM) — see bin/eval.ts;
//   room    — our own engine on a local model folder, in this process (a room of one).
import { readFileSync } from 'node:fs';
import type { Backend } from '../src/agent/backend.ts';
import { replayBackend } from '../src/agent/replay/replay-engine.ts';
import { loadBundledQwen3Tokenizer } from '../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../src/model/chat-template.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';
import type { ToolSchema } from '../src/model/chat-types.ts';
import { OpenAIBackend } from '../src/agent/openai-backend.ts';
import { probeServer, withApiKey } from '../src/agent/openai/server.ts';
import { EngineBackend } from '../src/agent/engine-backend.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { loadModelConfig } from '../src/model/config.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { Generator } from '../src/model/generator.ts';
import type { LayerEngine } from '../src/model/engine-types.ts';
import { scriptedReplies } from './script.ts';
import type { BrokenSolution, EvalTask } from './task.ts';

export interface EvalRun {
  /** The files the scripted model writes (replay only). */
  files?: Record<string, string>;
  /** The task and, for a broken variant, its broken change (replay only: a follow-up task is answered with edits). */
  task?: EvalTask;
  broken?: BrokenSolution;
  /** The agent's tools (a server backend sends their call grammar). */
  tools: readonly ToolSchema[];
}

export interface EvalModel {
  readonly name: string;
  readonly tokenizer: Tokenizer;
  readonly template: ChatTemplate;
  /** true: each task runs its right answer and its broken ones (replay); false: the model answers. */
  readonly scripted: boolean;
  backend(run: EvalRun): Backend;
  close?(): Promise<void>;
}

/**
 * The scripted model: Qwen3's tokenizer and chat template (JSON calls); each run's answer is its files
 * written from nothing or, for a follow-up task, its edits of the given files (script.ts).
 */
export async function replayModel(contextSize = 8192): Promise<EvalModel> {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(readFileSync(new URL('../test/fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'), 'Qwen3 chat template');
  return {
    name: 'replay', tokenizer, template, scripted: true,
    backend: (run) => replayBackend({ tokenizer, template, replies: scriptedReplies(run, template.format), contextSize, name: 'replay' }).backend,
  };
}

/** The model's own tokenizer and chat template from a folder, URL or Hugging Face id; the bundled Qwen3 ones by default. */
async function tokenizerAndTemplate(source?: string): Promise<{ tokenizer: Tokenizer; template: ChatTemplate }> {
  if (!source) {
    const tokenizer = await loadBundledQwen3Tokenizer();
    return { tokenizer, template: ChatTemplate.fromTokenizerConfig(tokenizer.config, 'bundled Qwen3 tokenizer_config.json') };
  }
  const src = await resolveModelSource(source);
  const tokenizer = await Tokenizer.fromSource(src);
  return { tokenizer, template: ChatTemplate.fromTokenizerConfig(tokenizer.config as Record<string, unknown>, `${src.label}/tokenizer_config.json`) };
}

/** An OpenAI-compatible server (probed once); each run gets its own backend with the agent's tools for the grammar. */
export async function openaiModel(url: string, model: string, opts: { tokenizer?: string; contextSize?: number } = {}): Promise<EvalModel> {
  const fetchFn = withApiKey(process.env.OPENAI_API_KEY); // a server that wants a key (a room's endpoint: README)
  const server = await probeServer(url, model, fetchFn);
  const { tokenizer, template } = await tokenizerAndTemplate(opts.tokenizer);
  return {
    name: `openai ${model} (${server.kind} at ${server.base})`, tokenizer, template, scripted: false,
    backend: (run) => new OpenAIBackend({ server, model, tokenizer, template, tools: run.tools, fetch: fetchFn, ...(opts.contextSize ? { contextSize: opts.contextSize } : {}) }),
  };
}

/** Our own engine on a local model (a room of one), CPU reference or WebGPU (Dawn) in this process. */
export async function roomModel(source: string, opts: { engine?: 'reference' | 'webgpu'; contextSize?: number } = {}): Promise<EvalModel> {
  const src = await resolveModelSource(source);
  const { tokenizer, template } = await tokenizerAndTemplate(source);
  const { numLayers } = await loadModelConfig(src);
  const weights = await loadWeights(src, { layers: [0, numLayers], embedding: true, head: true });
  const ctx = opts.contextSize ?? Math.min(8192, weights.config.maxPositionEmbeddings);
  let engine: LayerEngine;
  if (opts.engine === 'webgpu') {
    const { createWebGPUEngine } = await import('../src/gpu/create-engine.ts');
    engine = await createWebGPUEngine(weights, { ctx });
  } else {
    engine = new ReferenceEngine(weights, { ctx });
  }
  const generator = new Generator(engine, { ctx });
  return {
    name: `room of one: ${src.label} (${opts.engine ?? 'reference'})`, tokenizer, template, scripted: false,
    backend: () => new EngineBackend({ generator, tokenizer, template, contextSize: ctx, name: src.label }),
    close: () => engine.dispose(),
  };
}
