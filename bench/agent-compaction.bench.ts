// The agent's prompt reuse on a scripted session (replay model under the real Generator, real Qwen3 tokenizer and template):
// tokens computed per step vs the prompt size, and after each compaction how many tokens the pinned
// checkpoint (system prompt + tools) saved. Exact counts, not estimates. One answer checkpoint (ckpt 1),
// so what a compaction leaves to reuse is the pinned one.
// Then how many steps of one request writing files fit in an 8,192-token context before it ends with
// `context`, with compaction's stage 1 clearing old written content and without.
import { readFileSync } from 'node:fs';
import { ChatTemplate } from '../src/model/chat-template.ts';
import { loadBundledQwen3Tokenizer } from '../src/model/bundled-tokenizer.ts';
import { replayBackend } from '../src/agent/replay/replay-engine.ts';
import { RecordingBackend } from '../src/agent/recording-backend.ts';
import { MemoryFiles } from '../src/agent/files/memory.ts';
import { createFileTools } from '../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../src/agent/tools/registry.ts';
import { createCallCodec } from '../src/agent/call-codec.ts';
import { Agent } from '../src/agent/loop.ts';

export const title = 'Agent: tokens computed per step and after compaction (pinned checkpoint, 4,096-token context); steps before context (8,192)';

const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} line ${i}: the quick brown fox number ${(i * 7) % 13} jumps`).join('\n') + '\n';
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

export async function run(): Promise<Record<string, number | string>> {
  const tokenizer = await loadBundledQwen3Tokenizer();
  const template = new ChatTemplate(readFileSync(new URL('../test/fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
  const names = 'abcdefghij'.split('');
  const files = new MemoryFiles(Object.fromEntries(names.map((n) => [`${n}.txt`, lines(n, 25)])));
  const replies = [...names.map((n) => call('read_file', { path: `${n}.txt` })), 'Read them all.'];
  const backend = new RecordingBackend(replayBackend({ tokenizer, template, replies, contextSize: 4096, ckpt: 1 }).backend);
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const agent = new Agent({ backend, tools, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
  let compactions = 0;
  agent.subscribe((e) => { if (e.type === 'note' && e.kind === 'compaction') compactions++; });
  const started = performance.now();
  const out = await agent.run('Read the ten files');
  const ms = performance.now() - started;
  const pin = agent.conversation.pinAt;
  const prompts = backend.requests.map((r) => r.prompt.length);
  const computed = backend.results.map((r) => r.stats.promptComputed);
  const afterCompaction = backend.results.filter((r) => r.stats.promptReused === pin).map((r) => r.stats.promptComputed);
  const withClearing = await stepsBeforeContext(tokenizer, template, true);
  const withoutClearing = await stepsBeforeContext(tokenizer, template, false);
  return {
    'steps before context in 8,192, written content kept': `${withoutClearing.steps} (${withoutClearing.reason})`,
    'steps before context in 8,192, written content cleared': `${withClearing.steps} (${withClearing.reason})`,
    'more steps that fit (cleared / kept)': withClearing.steps / withoutClearing.steps,
    'end reason': out.reason,
    steps: out.stats.steps,
    compactions,
    'opening tokens (pinned checkpoint)': pin,
    'prompt tokens, all steps': prompts.reduce((a, b) => a + b, 0),
    'prompt tokens computed, all steps': computed.reduce((a, b) => a + b, 0),
    'computed / prompt tokens': computed.reduce((a, b) => a + b, 0) / prompts.reduce((a, b) => a + b, 0),
    'tokens computed right after compactions': afterCompaction.join(' '),
    'opening tokens not recomputed thanks to the pin': afterCompaction.length * pin,
    'agent overhead ms per step (replay, tools, rendering)': ms / out.stats.steps,
  };
}

/** One request writing 60-line files, one per step, until the conversation no longer fits 8,192 tokens. */
async function stepsBeforeContext(tokenizer: Awaited<ReturnType<typeof loadBundledQwen3Tokenizer>>, template: ChatTemplate, clearWrittenContent: boolean) {
  const maxSteps = 400;
  const replies = Array.from({ length: maxSteps }, (_, i) => call('write_file', { path: `part${i}.js`, content: lines(`// part ${i}`, 60) }));
  const { backend } = replayBackend({ tokenizer, template, replies, contextSize: 8192 });
  const files = new MemoryFiles({});
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const agent = new Agent({
    backend, tools, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }), maxSteps, clearWrittenContent,
  });
  const out = await agent.run('Write the parts');
  return { steps: out.reason === 'context' ? out.stats.steps - 1 : out.stats.steps, reason: out.reason };
}
