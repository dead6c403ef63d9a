// The OpenAI-compatible backend on a server without /v1/completions, against a real HTTP server in this
// process: it is found out from the server's answer (404, 405, OpenAI's "chat model" error) and asked once;
// the conversation then goes as chat messages with native tools (streamed tool_calls come back as the
// model's own <tool_call> text, live), or with the tools in the text where the server refuses `tools`
// (the turns then render to exactly our prompt); Stop, errors and hostile pieces behave as on completions.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { OpenAIBackend } from '../../../src/agent/openai-backend.ts';
import { probeServer } from '../../../src/agent/openai/server.ts';
import { noCallGrammar } from '../../../src/agent/openai/gbnf.ts';
import { Agent } from '../../../src/agent/loop.ts';
import { createCallCodec } from '../../../src/agent/call-codec.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { systemPromptFor } from '../../../src/agent/system-prompt.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import type { ChatMessage } from '../../../src/model/chat-types.ts';
import { startOpenAIServer, type ScriptedReply, type ScriptedServer, type ServerRoutes } from '../../helpers/openai-server.ts';
import type { AgentEvent } from '../../../src/agent/events.ts';
import type { BackendRequest } from '../../../src/agent/backend.ts';

vi.setConfig({ testTimeout: 60_000 });

const templateFile = (name: string) => new ChatTemplate(readFileSync(new URL(`../../fixtures/chat-templates/${name}`, import.meta.url), 'utf8'));
const qwen3 = templateFile('qwen3.jinja');
let server: ScriptedServer | undefined;
afterEach(async () => { await server?.close(); server = undefined; });

const CHAT_ONLY: ServerRoutes = { completions: '404' };
const PAGE = '<!doctype html>\n<h1>Hi</h1>\n';

async function setup(replies: ScriptedReply[], routes: ServerRoutes = CHAT_ONLY, kind: 'llama.cpp' | 'vllm' | 'generic' = 'llama.cpp', template = qwen3) {
  server = await startOpenAIServer({ replies, kind, nCtx: 4096, routes });
  const tokenizer = await loadBundledQwen3Tokenizer();
  const files = new MemoryFiles({});
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const info = await probeServer(server.url, 'qwen3-test');
  const backend = new OpenAIBackend({ server: info, model: 'qwen3-test', tokenizer, template, tools: tools.schemas(), progressMs: 2_000 });
  const agent = new Agent({ backend, tools, files, format: template.format, codec: createCallCodec({ tokenizer, format: template.format, tools: tools.schemas() }) });
  const events: AgentEvent[] = [];
  agent.subscribe((e) => events.push(e));
  return { backend, agent, files, events, tokenizer };
}

/** One request as the loop sends it: the prompt tokens and the same turns as messages. */
function request(backend: OpenAIBackend, messages: ChatMessage[], extra: Partial<BackendRequest> = {}): BackendRequest {
  const prompt = backend.encode(backend.render(messages, []));
  return { prompt, messages, maxNewTokens: 256, stopTokens: [151645], ...extra };
}

const writeCall = { name: 'write_file', arguments: JSON.stringify({ path: 'index.html', content: PAGE }), pieces: 4 };

describe('a server without /v1/completions', () => {
  test('gets the conversation as chat messages with native tools; streamed tool_calls run as calls, live', async () => {
    const { backend, agent, files, events } = await setup([
      { text: 'Writing it.', toolCalls: [writeCall] },
      { text: 'The page says Hi.' },
    ]);
    const out = await agent.run('Make a page that says Hi');
    expect(out.reason).toBe('done');
    expect(out.answer).toBe('The page says Hi.');
    expect(await files.readText('index.html')).toBe(PAGE);
    // /v1/completions was asked once; from then on every answer went to chat completions.
    expect(server!.paths).toEqual(['/v1/completions', '/v1/chat/completions', '/v1/chat/completions']);
    expect(backend.completionsMissing).toBe('404 Not Found: Not Found');
    expect(backend.route).toBe('chat (tools)');
    const [first, second] = server!.requests;
    expect(first).not.toHaveProperty('prompt');
    expect(first).toMatchObject({ model: 'qwen3-test', stream: true, chat_template_kwargs: { enable_thinking: false } });
    expect(first!.grammar).toBeUndefined();  // the server's own tool parser constrains the calls
    expect((first!.tools as { function: { name: string } }[]).map((t) => t.function.name)).toContain('write_file');
    // The agent here has the file tools only, so its system prompt does not ask to serve.
    expect(first!.messages).toEqual([{ role: 'system', content: systemPromptFor(['write_file']) }, { role: 'user', content: 'Make a page that says Hi' }]);
    // The answer goes back as prose + tool_calls, its result as the tool message answering that id.
    const messages = second!.messages as Record<string, unknown>[];
    expect(messages[2]).toEqual({
      role: 'assistant', content: 'Writing it.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_file', arguments: JSON.stringify({ path: 'index.html', content: PAGE }) } }],
    });
    expect(messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: expect.stringContaining('created index.html (2 lines)') });
    // The live view saw the call fill in piece by piece before it ran.
    const args = events.flatMap((e) => (e.type === 'call-args' ? [e.raw] : []));
    expect(args.length).toBeGreaterThanOrEqual(4);
    expect(args[0]).toMatch(/^\{"name": "write_file", "arguments":/);
    expect(args.at(-1)).toContain('"path": "index.html"');
    expect(out.summary).toMatch(/\(server: \d+\)/);
  });

  test('405 and OpenAI\'s "chat model" error switch too; a missing model and a server error do not', async () => {
    for (const completions of ['405', 'chat-model'] as const) {
      const { backend } = await setup([{ text: 'hello' }], { completions }, 'generic');
      const r = await backend.generate(request(backend, [{ role: 'user', content: 'hi' }]));
      expect(r).toMatchObject({ finish: 'stop-token', text: 'hello' });
      expect(server!.paths).toEqual(['/v1/completions', '/v1/chat/completions']);
      expect(server!.requests[0]).not.toHaveProperty('top_k');  // a generic server gets only the standard fields
      await server!.close();
    }
    const { backend } = await setup([{ status: 500, message: 'CUDA error: out of memory' }], { completions: 'yes' }, 'generic');
    const r = await backend.generate(request(backend, [{ role: 'user', content: 'hi' }]));
    expect(r.error?.message).toBe('the server answered POST /v1/completions with 500 Internal Server Error: CUDA error: out of memory');
    const other = new OpenAIBackend({ server: await probeServer(server!.url, 'qwen3-test'), model: 'other-model', tokenizer: await loadBundledQwen3Tokenizer(), template: qwen3 });
    expect((await other.generate(request(other, [{ role: 'user', content: 'hi' }]))).error?.message).toMatch(/POST \/v1\/completions with 404 Not Found: model 'other-model' not found$/);
    expect(server!.paths).toEqual(['/v1/completions', '/v1/completions']);
  });

  test('a server refusing tools gets them in the text: the turns render to exactly our prompt, and the grammar goes along', async () => {
    const { backend, agent, files } = await setup([
      { text: `Writing it.\n<tool_call>\n${JSON.stringify({ name: 'write_file', arguments: { path: 'index.html', content: PAGE } })}\n</tool_call>` },
      { text: 'Done: it says Hi.' },
    ], { completions: '404', tools: false });
    const prompts: string[] = [];
    const generate = backend.generate.bind(backend);
    backend.generate = (req) => { prompts.push(backend.decode(req.prompt)); return generate(req); };
    const out = await agent.run('Make a page that says Hi');
    expect(out.reason).toBe('done');
    expect(await files.readText('index.html')).toBe(PAGE);
    expect(backend.toolsRefused).toBe('500 Internal Server Error: tools param requires --jinja flag');
    expect(backend.route).toBe('chat (tools in the text)');
    expect(server!.paths).toEqual(['/v1/completions', '/v1/chat/completions', '/v1/chat/completions', '/v1/chat/completions']);
    const sent = server!.requests;  // the one refused for its tools, then the two answers
    expect(sent).toHaveLength(3);
    expect(sent[1]!.tools).toBeUndefined();
    expect(sent[1]!.grammar).toEqual(expect.stringContaining('"write_file"'));
    // A server with the same model renders these messages with the same template into our prompt, byte for
    // byte, but for the empty think block our prompt keeps on each answer (the template drops it from history).
    const noThink = (t: string) => t.replaceAll('<|im_start|>assistant\n<think>\n\n</think>\n\n', '<|im_start|>assistant\n');
    for (const [i, body] of sent.slice(1).entries()) {
      const rendered = qwen3.render(body.messages as ChatMessage[], [], { enableThinking: false, addGenerationPrompt: true });
      expect(noThink(rendered)).toBe(noThink(prompts[i]!));
      expect(rendered.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    }
    expect(prompts[1]).toContain('Writing it.\n<tool_call>');
    expect((sent[2]!.messages as ChatMessage[]).at(-1)).toEqual({ role: 'user', content: expect.stringMatching(/^<tool_response>\ncreated index.html \(2 lines\)/) });
  });

  test('Stop aborts a call as it streams; errors on chat completions are quoted, naming both routes when neither is there', async () => {
    const { backend } = await setup([
      { toolCalls: [{ ...writeCall, pieces: 40 }], delayMs: 20 },
      { status: 503, message: 'Loading model' },
      { text: 'partial ', streamError: 'slot unavailable' },
    ]);
    const stop = new AbortController();
    let seen = 0;
    const stopped = await backend.generate(request(backend, [{ role: 'user', content: 'go' }], { signal: stop.signal, onText: () => { if (++seen === 3) stop.abort(); } }));
    expect(stopped.finish).toBe('stopped');
    expect(stopped.text).toMatch(/^<tool_call>\n\{"name": "write_file", "arguments": \{"pa/);
    await vi.waitFor(() => expect(server!.closedEarly).toBe(1));
    const busy = await backend.generate(request(backend, [{ role: 'user', content: 'again' }]));
    expect(busy.error?.message).toBe('the server answered POST /v1/chat/completions with 503 Service Unavailable: Loading model');
    const broken = await backend.generate(request(backend, [{ role: 'user', content: 'more' }]));
    expect(broken).toMatchObject({ finish: 'error', text: 'partial ' });
    expect(broken.error?.message).toBe('the server reported an error mid-answer: slot unavailable');
    await server!.close();
    const none = await setup([], { completions: '404', chat: false }, 'generic');
    const r = await none.backend.generate(request(none.backend, [{ role: 'user', content: 'hi' }]));
    expect(r.error?.message).toBe('the server answered POST /v1/completions with 404 Not Found: Not Found and POST /v1/chat/completions with 404 Not Found: Not Found');
  });

  test('a whole JSON answer (a server that does not stream) and the XML call format', async () => {
    const coder = templateFile('qwen3-coder.jinja');
    const { backend } = await setup([
      { text: 'On it.', toolCalls: [{ name: 'read_file', arguments: '{"path": "a.txt"}' }], whole: true },
      { toolCalls: [{ name: 'list_dir', arguments: '{"path": ""}' }, { name: 'read_file', arguments: '{"path": "b' }] },
    ], CHAT_ONLY, 'vllm', coder);
    const whole = await backend.generate(request(backend, [{ role: 'user', content: 'read it' }]));
    expect(whole).toMatchObject({ finish: 'stop-token', text: 'On it.\n<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n</function>\n</tool_call>' });
    const seen: string[] = [];
    const two = await backend.generate(request(backend, [{ role: 'user', content: 'look' }], { onText: (t) => seen.push(t) }));
    // A call still streaming shows its function line; arguments that never became JSON stay for the repairs.
    expect(seen).toContain('<tool_call>\n<function=list_dir>\n');
    expect(two.text).toBe('<tool_call>\n<function=list_dir>\n<parameter=path>\n\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n{"name": "read_file", "arguments": {"path": "b}\n</tool_call>');
  });

  test('the closing answer goes with tool_choice "none" (OpenAI tools), or the no-call grammar (tools in the text) (26.8)', async () => {
    const { backend } = await setup([{ text: 'a' }, { text: 'b' }]);
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    await backend.generate(request(backend, messages, { constraint: () => null }));
    await backend.generate(request(backend, messages, { constraint: () => null, noCalls: true }));
    expect(server!.requests.map((r) => r.tool_choice)).toEqual([undefined, 'none']);
    await server!.close();
    const text = await setup([{ text: 'a' }, { text: 'b' }], { completions: '404', tools: false });
    await text.backend.generate(request(text.backend, messages, { constraint: () => null }));
    await text.backend.generate(request(text.backend, messages, { constraint: () => null, noCalls: true }));
    const grammars = server!.requests.filter((r) => r.tools === undefined).map((r) => String(r.grammar));
    expect(grammars[0]).toMatch(/^call ::= "<tool_call>"/m);
    expect(grammars[1]).toBe(noCallGrammar());
  });

  test('hostile tool_calls end the answer with a named error', async () => {
    await setup([]);                              // starts the server the probe below reads
    const bad = (pieces: unknown) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: pieces } }] })}\n\n`;
    const fake = (body: string): typeof fetch => async (input) => (String(input).endsWith('/v1/completions')
      ? new Response('{"detail":"Not Found"}', { status: 404, statusText: 'Not Found' })
      : new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
    const info = await probeServer(server!.url, 'qwen3-test');
    const tokenizer = await loadBundledQwen3Tokenizer();
    for (const [body, message] of [
      [bad([{ index: 5, function: { name: 'x' } }]), /a tool call with index 5 after 0 calls/],
      [bad({ index: 0 }), /tool_calls that are not a list/],
      [bad([{ index: 0, function: { name: 'read_file', arguments: 'x'.repeat(1 << 19) } }]), /^the server sent over 4096 characters for an answer of at most 256 tokens$/],
    ] as const) {
      const b = new OpenAIBackend({ server: info, model: 'qwen3-test', tokenizer, template: qwen3, tools: [], fetch: fake(body) });
      const r = await b.generate(request(b, [{ role: 'user', content: 'hi' }]));
      expect(r.finish).toBe('error');
      expect(r.error?.message).toMatch(message);
    }
  });
});
