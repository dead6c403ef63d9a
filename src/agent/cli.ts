// `npm run agent -- --project DIR --replay FILE.jsonl [--format xml|json] [--ctx N] [--json] [--transcript FILE]`
// Runs the agent loop headless on a folder on the replay model (one {"text": "..."} per line),
// prints the timeline events and the summary line; with --json the last line is
// {"reason": ..., "steps": n, "toolCalls": n, "summary": "..."}. --transcript writes every turn as the model
// saw it, one JSON line each (transcript.ts). Node only.
import { readFile, writeFile } from 'node:fs/promises';
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
import { createCallCodec } from './codec.ts';
import { Agent } from './loop.ts';
import { EventPrinter } from './event-format.ts';

export const AGENT_USAGE = 'usage: npm run agent -- --project DIR --replay FILE.jsonl [--format xml|json] [--ctx N] [--json] [--request TEXT] [--template FILE.jinja] [--preview] [--transcript FILE.jsonl]';

/** Bad command-line arguments; the message says which and shows the usage. */
export class AgentCliError extends Error {
  override name = 'AgentCliError';
}

export interface CliIo { out: (line: string) => void }

export interface CliOptions {
  project: string;
  replay: string;
  format: ToolFormat;
  ctx: number;
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
      },
    }));
  } catch (e) {
    throw new AgentCliError(`${(e as Error).message}\n${AGENT_USAGE}`);
  }
  if (typeof values.project !== 'string') throw new AgentCliError(`--project DIR is required\n${AGENT_USAGE}`);
  if (typeof values.replay !== 'string') throw new AgentCliError(`--replay FILE.jsonl is required\n${AGENT_USAGE}`);
  const format = (values.format ?? 'json') as string;
  if (format !== 'json' && format !== 'xml') throw new AgentCliError(`--format must be xml or json, not ${JSON.stringify(format)}`);
  const ctx = values.ctx === undefined ? 8192 : Number(values.ctx);
  if (!Number.isInteger(ctx) || ctx < 256) throw new AgentCliError(`--ctx must be a whole number of tokens (at least 256), not ${JSON.stringify(values.ctx)}`);
  const request = (values.request as string | undefined) ?? (positionals.join(' ') || 'Follow the replay script.');
  const opts: CliOptions = { project: values.project, replay: values.replay, format, ctx, json: values.json === true, request, preview: values.preview === true };
  if (typeof values.template === 'string') opts.template = values.template;
  if (typeof values.transcript === 'string') opts.transcript = values.transcript;
  return opts;
}

/** The chat template for a format: a given file, else the bundled Qwen3 (JSON) or the Qwen3-Coder fixture (XML). */
async function templateFor(opts: CliOptions, tokenizerConfig: Record<string, unknown>): Promise<ChatTemplate> {
  if (opts.template) return new ChatTemplate(await readFile(opts.template, 'utf8'), opts.template);
  if (opts.format === 'json') return ChatTemplate.fromTokenizerConfig(tokenizerConfig, 'bundled Qwen3 tokenizer_config.json');
  const file = new URL('../../test/fixtures/chat-templates/qwen3-coder.jinja', import.meta.url);
  return new ChatTemplate(await readFile(file, 'utf8'), 'Qwen3-Coder chat template');
}

/** Runs the CLI; returns the exit code (0 whatever the end reason; 2 bad arguments). */
export async function runAgentCli(argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseAgentArgs(argv);
  } catch (e) {
    io.out(`${(e as Error).name}: ${(e as Error).message}`);
    return 2;
  }
  const script = await readFile(opts.replay, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new AgentCliError(`cannot read the replay script ${opts.replay}: ${e.code ?? e.message}`);
  });
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = await templateFor(opts, tokenizer.config);
  const { backend } = replayBackend({ tokenizer, template, replies: parseReplayJsonl(script, opts.replay), contextSize: opts.ctx });
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
  agent.subscribe((e) => printer.push(e).forEach((line) => io.out(line)));
  const outcome = await agent.run(opts.request);
  printer.flush().forEach((line) => io.out(line));
  if (opts.transcript) await writeFile(opts.transcript, agent.transcript.jsonl());
  if (opts.json) {
    io.out(JSON.stringify({ reason: outcome.reason, steps: outcome.stats.steps, toolCalls: outcome.stats.toolCalls, summary: outcome.summary }));
  }
  return 0;
}
