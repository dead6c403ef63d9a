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
import type { Tokenizer } from '../src/model/tokenizer.ts';
import { repliesWriting } from './script.ts';

export interface EvalRun {
  /** The files the scripted model writes (replay only). */
  files?: Record<string, string>;
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

/** The scripted model: Qwen3's tokenizer and chat template (JSON calls), each run's files as its answers. */
export async function replayModel(contextSize = 8192): Promise<EvalModel> {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(readFileSync(new URL('../test/fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'), 'Qwen3 chat template');
  return {
    name: 'replay', tokenizer, template, scripted: true,
    backend: (run) => replayBackend({ tokenizer, template, replies: repliesWriting(run.files ?? {}, template.format), contextSize, name: 'replay' }).backend,
  };
}
