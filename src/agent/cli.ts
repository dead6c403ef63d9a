// `npm run agent -- --project DIR --replay FILE.jsonl | --openai URL --model NAME [--format xml|json] [--ctx N] [--json] [--transcript FILE]`
// Runs the agent loop headless on a folder, on the replay model (one {"text": "..."} per line) or on an
// OpenAI-compatible server (llama.cpp, vLLM, Ollama: openai-backend.ts; the prompt is rendered here with
// the model's chat template, from --tokenizer's tokenizer_config.json or the bundled Qwen3 one),
// prints the timeline events and the summary line; with --json the last line is
// {"reason": ..., "steps": n, "toolCalls": n, "summary": "...", "note": "..."|null}. --transcript writes every
// turn as the model saw it, one JSON line each (transcript.ts), as the run goes: a run cut short keeps
// every turn so far. Stop: `signal` (bin/agent.ts aborts it on Ctrl-C) stops the request as the app's Stop
// does — the partial answer kept, the summary printed, exit 0. Node only.
import { appendFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ChatTemplate } from '../model/chat-template.ts';
import { loadBundledQwen3Tokenizer } from '../model/bundled-tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { Backend } from './backend.ts';
import { replayBackend } from './replay/replay-engine.ts';
import { parseReplayJsonl } from './replay/script.ts';
import { NodeFolderFiles } from './files/node-folder.ts';
import { createFileTools } from './tools/file-tools.ts';
import { NodeRegexRunner } from './tools/regex-runner.ts';
import { ToolRegistry } from './tools/registry.ts';
import { createCallCodec } from './call-codec.ts';
import { Agent } from './loop.ts';
import { EventPrinter } from './event-format.ts';
import { OpenAIBackend } from './openai-backend.ts';
import { probeServer, withApiKey, type ServerInfo } from './openai/server.ts';

export const AGENT_USAGE = 'usage: npm run agent -- --project DIR (--replay FILE.jsonl | --openai URL --model NAME [--tokenizer DIR|URL|HF-ID]) [--format xml|json] [--ctx N] [--json] [--request TEXT] [--template FILE.jinja] [--preview] [--transcript FILE.jsonl]';

/** Bad command-line arguments; the message says which and shows the usage. */
export class AgentCliError extends Error {
  override name = 'AgentCliError';
}

export interface CliIo {
  out: (line: string) => void;
  /** Aborted = Stop (bin/agent.ts: the first Ctrl-C). */
  signal?: AbortSignal;
}

export interface CliOptions {
  project: string;
  /** The model: a replay script, or an OpenAI-compatible server and the model name it knows. */
  replay?: string;
  openai?: { url: string; model: string };
  /** Where the model's tokenizer.json and tokenizer_config.json are (default: the bundled Qwen3 ones). */
  tokenizer?: string;
  format: ToolFormat;
  /** Default: the server's context for --openai, else 8192. */
  ctx?: number;
  json: boolean;
  request: string;
  /** Register serve / preview_logs / run_js on headless Chromium (needs `npm run build` and Chromium). */
  preview: boolean;
  template?: string;
  /** Write the conversation as the model saw it here (JSONL). */
  transcript?: string;
}

export function parseAgentArgs(argv: string[]): CliOptions {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv, allowPositionals: true,
      options: {
        project: { type: 'string' }, replay: { type: 'string' }, format: { type: 'string' }, ctx: { type: 'string' },
        json: { type: 'boolean' }, request: { type: 'string' }, template: { type: 'string' }, preview: { type: 'boolean' }, transcript: { type: 'string' },
        openai: { type: 'string' }, model: { type: 'string' }, tokenizer: { type: 'string' },
      },
    }));
  } catch (e) {
    throw new AgentCliError(`${(e as Error).message}\n${AGENT_USAGE}`);
  }
  if (typeof values.project !== 'string') throw new AgentCliError(`--project DIR is required\n${AGENT_USAGE}`);
  if ((typeof values.replay === 'string') === (typeof values.openai === 'string')) {
    throw new AgentCliError(`give the model: --replay FILE.jsonl or --openai URL --model NAME\n${AGENT_USAGE}`);
  }
  if (typeof values.openai === 'string' && typeof values.model !== 'string') throw new AgentCliError(`--openai needs --model NAME (the model's name on the server)\n${AGENT_USAGE}`);
  const format = (values.format ?? 'json') as string;
  if (format !== 'json' && format !== 'xml') throw new AgentCliError(`--format must be xml or json, not ${JSON.stringify(format)}`);
  const ctx = values.ctx === undefined ? undefined : Number(values.ctx);
  if (ctx !== undefined && (!Number.isInteger(ctx) || ctx < 256)) throw new AgentCliError(`--ctx must be a whole number of tokens (at least 256), not ${JSON.stringify(values.ctx)}`);
  const request = (values.request as string | undefined) ?? (positionals.join(' ') || 'Follow the replay script.');
  const opts: CliOptions = { project: values.project, format, json: values.json === true, request, preview: values.preview === true };
  if (ctx !== undefined) opts.ctx = ctx;
  if (typeof values.replay === 'string') opts.replay = values.replay;
  if (typeof values.openai === 'string') opts.openai = { url: values.openai, model: String(values.model) };
  if (typeof values.tokenizer === 'string') opts.tokenizer = values.tokenizer;
  if (typeof values.template === 'string') opts.template = values.template;
  if (typeof values.transcript === 'string') opts.transcript = values.transcript;
  return opts;
}

/** The chat template: a given file, else the tokenizer's own (JSON), or the Qwen3-Coder fixture for --format xml. */
async function templateFor(opts: CliOptions, tokenizerConfig: Record<string, unknown>, label: string): Promise<ChatTemplate> {
  if (opts.template) return new ChatTemplate(await readFile(opts.template, 'utf8'), opts.template);
  if (opts.format === 'json' || opts.tokenizer) return ChatTemplate.fromTokenizerConfig(tokenizerConfig, `${label}/tokenizer_config.json`);
  const file = new URL('../../test/fixtures/chat-templates/qwen3-coder.jinja', import.meta.url);
  return new ChatTemplate(await readFile(file, 'utf8'), 'Qwen3-Coder chat template');
}

async function tokenizerFor(opts: CliOptions): Promise<{ tokenizer: Tokenizer; label: string }> {
  if (!opts.tokenizer) return { tokenizer: await loadBundledQwen3Tokenizer(), label: 'bundled Qwen3' };
  const { resolveModelSource } = await import('../model/sources/resolve.ts');
  const { Tokenizer: ModelTokenizer } = await import('../model/tokenizer.ts');
  const source = await resolveModelSource(opts.tokenizer);
  return { tokenizer: await ModelTokenizer.fromSource(source), label: source.label };
}

/** Runs the CLI; returns the exit code (0 whatever the end reason; 1 the server cannot be used; 2 bad arguments). */
export async function runAgentCli(argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseAgentArgs(argv);
  } catch (e) {
    io.out(`${(e as Error).name}: ${(e as Error).message}`);
    return 2;
  }
  const { tokenizer, label } = await tokenizerFor(opts);
  const template = await templateFor(opts, tokenizer.config, label);
  const files = await NodeFolderFiles.open(opts.project, { create: true });
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  let preview: { close(): Promise<void> } | undefined;
  if (opts.preview) {
    // Loaded only when asked for: it starts the app server and headless Chromium.
    const { HeadlessPreview } = await import('../preview/headless.ts');
    const { createPreviewTools } = await import('../preview/tools.ts');
    const headless = await HeadlessPreview.start({ files });
    preview = headless;
    for (const tool of createPreviewTools(headless)) tools.register(tool);
  }
  try {
    let backend: Backend;
    if (opts.openai) {
      const { url, model } = opts.openai;
      let server: ServerInfo;
      const fetchFn = withApiKey(process.env.OPENAI_API_KEY); // a server that wants a key (a room's endpoint: README)
      try {
        server = await probeServer(url, model, fetchFn);
      } catch (e) {
        io.out(`${(e as Error).name}: ${(e as Error).message}`);
        return 1;
      }
      backend = new OpenAIBackend({ server, model, tokenizer, template, tools: tools.schemas(), fetch: fetchFn, ...(opts.ctx ? { contextSize: opts.ctx } : {}) });
      io.out(`· ${model} on ${server.base} (${server.kind}, context ${backend.contextSize} tokens)`);
    } else {
      const script = await readFile(opts.replay!, 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw new AgentCliError(`cannot read the replay script ${opts.replay}: ${e.code ?? e.message}`);
      });
      backend = replayBackend({ tokenizer, template, replies: parseReplayJsonl(script, opts.replay), contextSize: opts.ctx ?? 8192 }).backend;
    }
    return await runLoop(opts, io, { backend, tools, tokenizer, template, files });
  } finally {
    await preview?.close();
  }
}

async function runLoop(
  opts: CliOptions, io: CliIo,
  parts: { backend: Backend; tools: ToolRegistry; tokenizer: Tokenizer; template: ChatTemplate; files: NodeFolderFiles },
): Promise<number> {
  const { backend, tools, tokenizer, template, files } = parts;
  const agent = new Agent({ backend, tools, format: template.format, codec: createCallCodec({ tokenizer, format: template.format, tools: tools.schemas() }), files });
  const printer = new EventPrinter();
  const transcript = opts.transcript ? transcriptWriter(opts.transcript, agent) : null;
  agent.subscribe((e) => {
    printer.push(e).forEach((line) => io.out(line));
    transcript?.();
  });
  const outcome = await agent.run(opts.request, io.signal ? { signal: io.signal } : {});
  transcript?.();
  printer.flush().forEach((line) => io.out(line));
  if (backend instanceof OpenAIBackend && backend.completionsMissing) {
    const tools = backend.toolsRefused ? `the tools in the text (it refused tools: ${backend.toolsRefused})` : 'the tools as OpenAI tools';
    io.out(`· the server has no /v1/completions (${backend.completionsMissing}); the conversation went to /v1/chat/completions as messages, ${tools}`);
  }
  if (backend instanceof OpenAIBackend && backend.grammarRefused) io.out(`· the server refused the call grammar (${backend.grammarRefused}); calls were read by the parser and repairs alone`);
  if (opts.json) {
    io.out(JSON.stringify({ reason: outcome.reason, steps: outcome.stats.steps, toolCalls: outcome.stats.toolCalls, summary: outcome.summary, note: outcome.note }));
  }
  return 0;
}

/** Writes the transcript's lines to `file` as they are added (the file starts empty; each call appends the new ones). */
function transcriptWriter(file: string, agent: Agent): () => void {
  let written = 0;
  writeFileSync(file, '');
  return () => {
    const lines = agent.transcript.lines;
    if (lines.length === written) return;
    appendFileSync(file, lines.slice(written).map((l) => `${JSON.stringify(l)}\n`).join(''));
    written = lines.length;
  };
}
