// Test harness for the agent loop: the real Qwen3 tokenizer and chat templates, the replay model under the
// real Generator and EngineBackend (scripted replies sampled through the real grammar), file tools over
// memory, a scripted serve. `backend` records every request and result.
import { readFileSync } from 'node:fs';
import type { ToolFormat } from '../../../src/model/tool-format.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { replayBackend } from '../../../src/agent/replay/replay-engine.ts';
import { RecordingBackend } from '../../../src/agent/recording-backend.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { SERVE } from '../../../src/agent/tools/schemas.ts';
import { Agent, type AgentOptions } from '../../../src/agent/loop.ts';
import { createCallCodec } from '../../../src/agent/call-codec.ts';
import type { AgentEvent } from '../../../src/agent/events.ts';
import type { Tool, ToolOutcome } from '../../../src/agent/tool-types.ts';
import { serveOutcome } from '../../../src/preview/tools.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/chat-templates/${name}.jinja`, import.meta.url), 'utf8');

export interface HarnessOptions extends Partial<Omit<AgentOptions, 'backend' | 'tools' | 'codec' | 'format' | 'files'>> {
  replies: string[];
  project?: Record<string, string>;
  format?: ToolFormat;
  contextSize?: number;
  devices?: number;
  tokenDelayMs?: number;
  /** Answer checkpoints the Generator keeps (its default when absent). */
  ckpt?: number;
  /** Scripted serve results, one per serve call: the page's first errors ([] = clean), or a page still loading. */
  serve?: (string[] | { errors: string[]; loaded: false })[];
  /** Leave out the grammar mask (like an HTTP backend without constrained sampling). */
  noMask?: boolean;
  /** More tools beside the file tools (e.g. the real preview's serve), declared to the model too. */
  extraTools?: Tool[];
}

export async function harness(o: HarnessOptions) {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const format = o.format ?? 'json';
  const template = new ChatTemplate(fixture(format === 'json' ? 'qwen3' : 'qwen3-coder'));
  const replay = replayBackend({
    tokenizer, template, replies: o.replies, contextSize: o.contextSize ?? 8192, devices: o.devices ?? 1, tokenDelayMs: o.tokenDelayMs ?? 0,
    ...(o.ckpt === undefined ? {} : { ckpt: o.ckpt }),
  });
  const backend = new RecordingBackend(replay.backend);
  const files = new MemoryFiles(o.project ?? {});
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const serveResults = [...(o.serve ?? [])];
  if (o.serve) tools.register(scriptedServe(serveResults));
  for (const tool of o.extraTools ?? []) tools.register(tool);
  const fullCodec = createCallCodec({ tokenizer, format, tools: tools.schemas() });
  const codec = o.noMask ? { parse: fullCodec.parse } : fullCodec;
  const { replies: _r, project: _f, format: _fm, contextSize: _c, devices: _d, tokenDelayMs: _t, serve: _s, noMask: _n, ckpt: _k, extraTools: _x, ...rest } = o;
  const agent = new Agent({ backend, tools, codec, format, files, ...rest });
  const events: AgentEvent[] = [];
  agent.subscribe((e) => events.push(e));
  return { agent, backend, replay: replay.engine, files, tools, tokenizer, events, template, codec };
}

/**
 * serve as the real preview answers it (src/preview/tools.ts serveOutcome), with a load time that differs
 * on every call as a real page's does, so no test can pass only because two serves read the same.
 */
function scriptedServe(results: NonNullable<HarnessOptions['serve']>): Tool {
  let calls = 0;
  return {
    schema: SERVE,
    readOnly: true,
    run: async (): Promise<ToolOutcome> => {
      const next = results.shift() ?? [];
      const { errors, loaded } = Array.isArray(next) ? { errors: next, loaded: true } : next;
      calls++;
      const ms = loaded ? 180 + ((calls * 37) % 200) : 2000 + calls;
      return serveOutcome({ port: 5173, folder: '', page: 'index.html', loaded, ms, errors, reloaded: calls > 1 });
    },
  };
}

/** A scripted answer calling one tool, in the JSON format the Qwen3 template teaches. */
export function call(name: string, args: Record<string, unknown>, before = ''): string {
  return `${before}<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
}

/** The same in the XML format (Qwen3-Coder). */
export function xmlCall(name: string, args: Record<string, string>): string {
  const params = Object.entries(args).map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`).join('');
  return `<tool_call>\n<function=${name}>\n${params}</function>\n</tool_call>`;
}

export const notes = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'note' ? [`${e.kind}: ${e.text}`] : []));
export const results = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'result' ? [e.text] : []));
