// The agent corpus for speculative decoding: what the agent's model is asked and answers on the agent's
// own work. The replay scripts (public/replay/*.jsonl) and the eval suite's scripted solutions (apps
// built from nothing, and follow-ups: a change to an existing app, read_file then edit_file) are run
// through the real agent loop (tools on a scratch folder, the real chat template and tokenizer); every
// generate call's prompt and answer are recorded, so the answers are "the target model's output" in the
// context the agent really gives it (system prompt, tools, earlier calls and their results), with the
// call grammar the agent sampled it under (a fresh copy per replay: the grammar cuts drafted tokens it
// forbids before they are sent, as it does in the app).
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent } from '../../src/agent/loop.ts';
import { createCallCodec, type CallCodec } from '../../src/agent/call-codec.ts';
import { EngineBackend } from '../../src/agent/engine-backend.ts';
import { ToolCallGrammar } from '../../src/agent/grammar/tool-call-mask.ts';
import { NodeFolderFiles } from '../../src/agent/files/node-folder.ts';
import { ReplayEngine } from '../../src/agent/replay/replay-engine.ts';
import { parseReplayJsonl } from '../../src/agent/replay/script.ts';
import { NodeRegexRunner } from '../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../src/agent/tools/registry.ts';
import { createFileTools } from '../../src/agent/tools/file-tools.ts';
import { loadBundledQwen3Tokenizer } from '../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../src/model/chat-template.ts';
import { Generator } from '../../src/model/generator.ts';
import type { Constraint, TokenGenerator } from '../../src/model/generate-types.ts';
import { isAllowed } from '../../src/model/sampler.ts';
import { PromptLookupDrafter } from '../../src/model/speculative/prompt-lookup.ts';
import type { Draft, Drafter } from '../../src/model/speculative/types.ts';
import { repliesEditing, repliesWriting } from '../../eval/script.ts';
import { EVAL_TASKS } from '../../eval/tasks/index.ts';

/** One answer: the prompt the model saw and the tokens it gave (stop token excluded). */
export interface CorpusAnswer {
  source: string;
  prompt: number[];
  answer: number[];
  /** An app built from nothing (the replays, most eval tasks) or a follow-up (a change to a given app). */
  kind: CorpusKind;
  /** A fresh copy of the call grammar the answer was sampled under (absent: it was unconstrained). */
  constraint?: () => Constraint;
}

export type CorpusKind = 'build' | 'follow-up';

const CONTEXT = 16384;

export async function agentCorpus(): Promise<CorpusAnswer[]> {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(await readFile(path.resolve('test/fixtures/chat-templates/qwen3.jinja'), 'utf8'), 'Qwen3 chat template');
  const runs: { source: string; kind: CorpusKind; request: string; replies: string[]; given?: Record<string, string> }[] = [];
  const replayDir = path.resolve('public/replay');
  for (const f of (await readdir(replayDir)).filter((n) => n.endsWith('.jsonl')).sort()) {
    runs.push({ source: `replay/${f}`, kind: 'build', request: 'Build a small counter page.', replies: parseReplayJsonl(await readFile(path.join(replayDir, f), 'utf8'), f) });
  }
  for (const task of EVAL_TASKS) {
    runs.push(task.edits
      ? { source: `eval/${task.id}`, kind: 'follow-up', request: task.request, replies: repliesEditing(task, template.format), ...(task.given ? { given: task.given } : {}) }
      : { source: `eval/${task.id}`, kind: 'build', request: task.request, replies: repliesWriting(task.solution, template.format) });
  }

  const out: CorpusAnswer[] = [];
  for (const run of runs) {
    const dir = await mkdtemp(path.join(tmpdir(), 'pooled-corpus-'));
    try {
      const files = await NodeFolderFiles.open(dir);
      for (const [p, content] of Object.entries(run.given ?? {})) await files.write(p, content);
      const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
      const generator = new Generator(new ReplayEngine(tokenizer, run.replies, CONTEXT), { ctx: CONTEXT });
      const { codec, copyOf } = recordedGrammar(tokenizer, template.format, tools);
      const recording: TokenGenerator = {
        generate: async (prompt, opts) => {
          const r = await generator.generate(prompt, opts);
          const copy = opts.constraint ? copyOf.get(opts.constraint) : undefined;
          if (opts.constraint && !copy) throw new Error(`${run.source}: an answer was sampled under a constraint the corpus cannot copy`);
          out.push({ source: run.source, kind: run.kind, prompt: [...prompt], answer: [...r.ids], ...(copy ? { constraint: copy } : {}) });
          return r;
        },
      };
      const backend = new EngineBackend({ generator: recording, tokenizer, template, contextSize: CONTEXT, name: 'corpus' });
      const agent = new Agent({ backend, tools, files, format: template.format, codec });
      await agent.run(run.request);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return out;
}

/**
 * The agent's codec, remembering for each constraint it hands out how to make a fresh one of the same
 * kind (the call grammar, or the no-calls grammar of a closing answer) from a grammar of the same tools.
 */
function recordedGrammar(tokenizer: Awaited<ReturnType<typeof loadBundledQwen3Tokenizer>>, format: ChatTemplate['format'], tools: ToolRegistry): { codec: CallCodec; copyOf: WeakMap<object, () => Constraint> } {
  const codec = createCallCodec({ tokenizer, format, tools: tools.schemas() });
  const grammar = new ToolCallGrammar({ tokenizer, format, tools: tools.schemas() });
  const copyOf = new WeakMap<object, () => Constraint>();
  const tag = <C extends Constraint>(c: C, copy: () => Constraint): C => { copyOf.set(c, copy); return c; };
  return {
    codec: {
      parse: (answer) => codec.parse(answer),
      constraint: () => tag(codec.constraint!(), () => grammar.constraint()),
      noCalls: () => tag(codec.noCalls!(), () => grammar.noCalls()),
    },
    copyOf,
  };
}

/**
 * Greedy verification against a target that answers `answer` (what speculative decoding does when the
 * model's own picks are the answer's tokens): per pass the drafter guesses up to maxDraft tokens from the
 * context, the longest prefix equal to the answer is kept, plus the model's own next token. Passes count
 * every decode step after the first token (as GenerationStats.passes does). The drafter must answer at
 * once (prompt lookup, the oracles), not with a promise. Under the answer's grammar a draft is cut before
 * its first forbidden token, as a pass cuts it (the drafter is asked with the masks too).
 */
export function lookupOnAnswer(a: CorpusAnswer, maxDraft: number, drafter: Drafter = new PromptLookupDrafter()): { passes: number; accepted: number; drafted: number; perPass: number[] } {
  const context = [...a.prompt, ...a.answer.slice(0, 1)];
  const grammar = a.constraint?.();
  let at = 1, passes = 0, accepted = 0, drafted = 0;
  const perPass: number[] = [];
  while (at < a.answer.length) {
    const room = Math.min(maxDraft, a.answer.length - at - 1);
    const soFar = a.answer.slice(0, at);
    const maskAfter = grammar ? (d: readonly number[]) => (d.length === 0 ? grammar(soFar) : grammar.lookahead!(soFar, d)[d.length - 1]) : undefined;
    const guess = room > 0 ? syncDraft(drafter.draft({ context, max: room, sampling: { temperature: 0 }, seed: 0, ...(maskAfter ? { constraint: maskAfter } : {}) })).tokens.slice(0, room) : [];
    // Row i's mask is the grammar's after the answer and guess[0..i).
    const masks = grammar && guess.length > 0 ? [grammar(soFar), ...grammar.lookahead!(soFar, guess)] : [];
    let allowed = 0;
    while (allowed < guess.length && (!grammar || isAllowed(masks[allowed] ?? undefined, guess[allowed]!))) allowed++;
    const draft = guess.slice(0, allowed);
    let kept = 0;
    while (kept < draft.length && draft[kept] === a.answer[at + kept]) kept++;
    const emitted = kept + 1;
    for (let i = 0; i < emitted; i++) context.push(a.answer[at + i]!);
    at += emitted;
    passes++;
    accepted += kept;
    drafted += draft.length;
    perPass.push(kept);
  }
  return { passes, accepted, drafted, perPass };
}

function syncDraft(d: Draft | Promise<Draft>): Draft {
  if (d instanceof Promise) throw new Error('lookupOnAnswer: the drafter answered with a promise (only drafters that answer at once are replayed here)');
  return d;
}
