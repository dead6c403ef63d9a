// The OpenAI-compatible backend against a real HTTP server in this process that speaks the wire format
// from a script: probing, streaming, Stop within one token, the server's errors quoted, the call grammar
// sent where the server takes one (and dropped where it refuses it), and a whole agent request to done.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { OpenAIBackend } from '../../../src/agent/openai-backend.ts';
import { probeServer, ServerError, serverBase } from '../../../src/agent/openai/server.ts';
import { noCallGrammar } from '../../../src/agent/openai/gbnf.ts';
import { Agent } from '../../../src/agent/loop.ts';
import { createCallCodec } from '../../../src/agent/call-codec.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { startOpenAIServer, type ScriptedReply, type ScriptedServer } from '../../helpers/openai-server.ts';
import { call } from './harness.ts';
import type { BackendRequest } from '../../../src/agent/backend.ts';

vi.setConfig({ testTimeout: 60_000 });

const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
let server: ScriptedServer | undefined;
afterEach(async () => { await server?.close(); server = undefined; });

async function backendOn(replies: ScriptedReply[], kind: 'llama.cpp' | 'vllm' | 'generic' = 'llama.cpp', extra: { progressMs?: number; deadlineMs?: number } = {}) {
  server = await startOpenAIServer({ replies, kind, nCtx: 4096 });
  const tokenizer = await loadBundledQwen3Tokenizer();
  const files = new MemoryFiles({});
  const tools = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const info = await probeServer(`${server.url}/v1/`, 'qwen3-test');
  const backend = new OpenAIBackend({ server: info, model: 'qwen3-test', tokenizer, template, tools: tools.schemas(), ...extra });
  return { backend, tokenizer, files, tools, info };
}

function request(backend: OpenAIBackend, text: string, extra: Partial<BackendRequest> = {}): BackendRequest {
  const prompt = backend.encode(backend.render([{ role: 'user', content: text }], []));
  return { prompt, maxNewTokens: 256, stopTokens: [151645], ...extra };
}

describe('finding the server', () => {
  test('kind, context and models come from the server; a missing model and an unreachable server are named', async () => {
    const { info } = await backendOn([]);
    expect(info).toMatchObject({ kind: 'llama.cpp', contextSize: 4096, models: ['qwen3-test'] });
    expect(serverBase('http://h:1/v1/')).toBe('http://h:1');
    await expect(probeServer(server!.url, 'llama-9000')).rejects.toThrow(/has no model "llama-9000"; it serves: qwen3-test/);
    const port = server!.port;
    await server!.close();
    server = undefined;
    await expect(probeServer(`http://127.0.0.1:${port}`, 'qwen3-test')).rejects.toThrow(/^the server at http:\/\/127\.0\.0\.1:\d+ cannot be reached: \w+/);
    expect(() => serverBase('ftp://x')).toThrow(ServerError);
  });
});

describe('one answer', () => {
  test('streams: the text grows chunk by chunk; tokens are counted with our tokenizer, the server\'s usage kept beside', async () => {
    const { backend, tokenizer } = await backendOn([{ text: 'Hello there, this streams in pieces.' }]);
    const seen: string[] = [];
    const r = await backend.generate(request(backend, 'Say hello', { onText: (t) => seen.push(t) }));
    expect(r.finish).toBe('stop-token');
    expect(r.text).toBe('Hello there, this streams in pieces.');
    expect(seen.length).toBe(9);
    expect(seen.every((t, i) => i === 0 || t.startsWith(seen[i - 1]!))).toBe(true);
    expect(r.ids).toEqual(tokenizer.encode(r.text));
    expect(r.stats.generated).toBe(r.ids.length);
    expect(r.serverUsage).toEqual({ promptTokens: expect.any(Number), completionTokens: 9 });
    // The prompt went as the conversation rendered with the model's own template, thinking off.
    const sent = server!.requests[0]!;
    expect(sent.prompt).toBe('<|im_start|>user\nSay hello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
    expect(sent).toMatchObject({ model: 'qwen3-test', stream: true, max_tokens: 256, stop: ['<|im_end|>'], temperature: 0.7, top_p: 0.8, top_k: 20 });
  });

  test('Stop aborts the request within one token: the text so far is kept, the server sees the stream closed', async () => {
    const { backend } = await backendOn([{ text: 'x'.repeat(400), chunks: Array.from({ length: 100 }, (_, i) => `c${i} `), delayMs: 25 }]);
    const stop = new AbortController();
    let chunks = 0;
    const r = await backend.generate(request(backend, 'Go on', { signal: stop.signal, onText: () => { if (++chunks === 3) stop.abort(); } }));
    expect(r.finish).toBe('stopped');
    expect(r.text).toBe('c0 c1 c2 ');
    await vi.waitFor(() => expect(server!.closedEarly).toBe(1));
    expect(server!.chunksSent[0]).toBeLessThanOrEqual(4);
  });

  test('the server\'s errors end the answer with reason error, quoting it', async () => {
    const { backend } = await backendOn([
      { status: 500, message: 'CUDA error: out of memory' },
      { status: 400, message: 'the request exceeds the available context size (4096 tokens)' },
      { text: 'partial ', streamError: 'slot unavailable' },
    ], 'generic', { progressMs: 300 });
    const a = await backend.generate(request(backend, 'one'));
    expect(a.finish).toBe('error');
    expect(a.error?.message).toBe('the server answered POST /v1/completions with 500 Internal Server Error: CUDA error: out of memory');
    const b = await backend.generate(request(backend, 'two'));
    expect(b.error?.message).toMatch(/400 Bad Request: the request exceeds the available context size \(4096 tokens\)$/);
    const c = await backend.generate(request(backend, 'three'));
    expect(c).toMatchObject({ finish: 'error', text: 'partial ' });
    expect(c.error?.message).toBe('the server reported an error mid-answer: slot unavailable');
  });

  test('a stalled server, a model the server does not have, and a server gone away are errors too', async () => {
    const { backend, tokenizer, info } = await backendOn([{ stall: true }], 'generic', { progressMs: 300 });
    const stalled = await backend.generate(request(backend, 'hello'));
    expect(stalled.error?.message).toMatch(/sent nothing for 0.3 s$/);
    const wrong = new OpenAIBackend({ server: info, model: 'other-model', tokenizer, template });
    expect((await wrong.generate(request(wrong, 'hi'))).error?.message).toMatch(/404 Not Found: model 'other-model' not found$/);
    await server!.close();
    server = undefined;
    expect((await backend.generate(request(backend, 'hi'))).error?.message).toMatch(/^the server at http:\/\/127\.0\.0\.1:\d+ cannot be reached: \w+/);
  });
});

describe('the call grammar', () => {
  test('goes to llama.cpp as grammar and to vLLM as structured outputs; a server that refuses it is asked again without', async () => {
    const constraint = () => null;
    const llama = await backendOn([{ text: 'ok', refuseGrammar: true }, { text: 'ok again' }]);
    const first = await llama.backend.generate(request(llama.backend, 'a', { constraint }));
    expect(first.text).toBe('ok');
    expect(server!.requests.map((r) => typeof r.grammar)).toEqual(['string', 'undefined']);
    expect(String(server!.requests[0]!.grammar)).toMatch(/^root ::= prose \( call ws \)\*\ncall ::=|tool-name ::= "list_dir" \| "read_file"/m);
    expect(llama.backend.grammarRefused).toMatch(/400 Bad Request: failed to parse grammar/);
    await llama.backend.generate(request(llama.backend, 'b', { constraint }));
    expect(server!.requests[2]!.grammar).toBeUndefined();  // remembered
    await server!.close();
    const vllm = await backendOn([{ text: 'ok' }], 'vllm');
    expect(vllm.info).toMatchObject({ kind: 'vllm', contextSize: 4096 });
    await vllm.backend.generate(request(vllm.backend, 'a', { constraint }));
    expect(server!.requests[0]!.structured_outputs).toEqual({ grammar: expect.stringContaining('tool-name ::= "list_dir"') });
    await server!.close();
    const plain = await backendOn([{ text: 'ok' }], 'generic');
    await plain.backend.generate(request(plain.backend, 'a', { constraint }));
    expect(server!.requests[0]!.grammar ?? server!.requests[0]!.structured_outputs).toBeUndefined();
  });
});

test('a whole agent request on the server: writes the file, answers, ends done; the summary shows the server\'s count', async () => {
  const { backend, tokenizer, files, tools } = await backendOn([
    { text: call('write_file', { path: 'index.html', content: '<!doctype html>\n<h1>Hi</h1>\n' }, 'Writing it.\n') },
    { text: 'The page says Hi.' },
  ]);
  const agent = new Agent({ backend, tools, files, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
  const out = await agent.run('Make a page that says Hi');
  expect(out.reason).toBe('done');
  expect(out.answer).toBe('The page says Hi.');
  expect(await files.readText('index.html')).toBe('<!doctype html>\n<h1>Hi</h1>\n');
  expect(out.summary).toMatch(/^2 steps · 1 tool call · \d+ tok \(server: \d+\) · [\d.]+ tok\/s · on the server · [\d.]+ s$/);
  // The first prompt goes as text; the server counted it as we do, so the second goes as our token ids
  // (llama.cpp takes them): the first plus the answer and the result, rendered by us.
  const [p1, ids2] = server!.requests.map((r) => r.prompt);
  expect(typeof p1).toBe('string');
  expect(Array.isArray(ids2) && ids2.every((id) => Number.isInteger(id))).toBe(true);
  expect(backend.promptIds).toBe(true);
  const p2 = tokenizer.decode(ids2 as number[]);
  expect(p2.startsWith(p1 as string)).toBe(true);
  expect(p2).toContain('<tool_response>\ncreated index.html (2 lines)\n</tool_response>');
  expect(server!.requests[0]!.grammar).toEqual(expect.stringContaining('"write_file"'));
});

test('a server error ends the agent\'s request with reason error and a note quoting the server', async () => {
  const { backend, tokenizer, files, tools } = await backendOn([{ status: 503, message: 'Loading model' }], 'generic');
  const agent = new Agent({ backend, tools, files, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
  const out = await agent.run('Make a page');
  expect(out.reason).toBe('error');
  expect(out.note).toBe('the model failed: the server answered POST /v1/completions with 503 Service Unavailable: Loading model');
  expect(out.summary).toMatch(/ · error$/);
});

describe('token counts: ours against the server\'s (26.6)', () => {
  test('a server that takes ids (llama.cpp, vLLM) gets our ids once its count of a text prompt agreed; another keeps text', async () => {
    for (const kind of ['llama.cpp', 'vllm', 'generic'] as const) {
      const { backend } = await backendOn([{ text: 'one' }, { text: 'two' }], kind);
      const first = request(backend, 'first');
      const second = request(backend, 'second question');
      await backend.generate(first);
      await backend.generate(second);
      const [a, b] = server!.requests.map((r) => r.prompt);
      expect(a, kind).toBe(backend.decode(first.prompt));
      if (kind === 'generic') expect(b, kind).toBe(backend.decode(second.prompt));
      else expect(b, kind).toEqual(second.prompt);
      await server!.close();
      server = undefined;
    }
    // A server that turns a prompt of ids down is asked again with text, and text it stays.
    const { backend } = await backendOn([{ text: 'one' }, { text: 'two', refuseIds: true }, { text: 'three' }]);
    for (const q of ['first', 'second', 'third']) expect((await backend.generate(request(backend, q))).finish).toBe('stop-token');
    expect(server!.requests.map((r) => (Array.isArray(r.prompt) ? 'ids' : typeof r.prompt))).toEqual(['string', 'ids', 'string', 'string']);
    expect(backend.idsRefused).toBe("400 Bad Request: 'prompt' must be a string");
  });

  test('a server that counts otherwise is named on the timeline once, and its count sets the budget', async () => {
    // A server whose tokenizer gives three tokens for each of ours (the 705 against ~2,135).
    const { backend, tokenizer, files, tools } = await backendOn([
      { text: call('list_dir', {}), promptTokens: (n) => 3 * n },
      { text: call('read_file', { path: 'none.txt' }), promptTokens: (n) => 3 * n },
      { text: 'Nothing there.', promptTokens: (n) => 3 * n },
    ], 'llama.cpp');
    const agent = new Agent({ backend, tools, files, format: 'json', codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
    const out = await agent.run('What is in the folder?');
    expect(out.reason).toBe('done');
    const notes = agent.timeline.items.filter((i) => i.kind === 'note' && i.note === 'server');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ text: expect.stringMatching(/^the server counted [\d,]+ prompt tokens where our tokenizer counts [\d,]+: its tokenizer \(or its template\) differs from ours, so its count sets the budget from now on$/) });
    // The window is taken in the server's tokens: 4,096 of its tokens are ~1,365 of ours.
    expect(backend.contextSize).toBe(Math.floor(4096 / backend.counts.ratio));
    expect(backend.counts.ratio).toBeCloseTo(3, 1);
    // After the first answer every ask leaves room for the server's own count of the prompt; ids never go.
    for (const sent of server!.requests.slice(1)) {
      const theirs = 3 * tokenizer.encode(String(sent.prompt)).length;
      expect(typeof sent.prompt).toBe('string');
      expect(sent.max_tokens as number).toBeLessThanOrEqual(4096 - theirs + 3);
    }
  });
});

test('the closing answer at the step limit sends the no-call grammar, not the call grammar (26.8)', async () => {
  const { backend, tokenizer, files, tools } = await backendOn([{ text: call('list_dir', {}) }, { text: 'I listed the folder; nothing is left.' }]);
  const agent = new Agent({ backend, tools, files, format: 'json', maxSteps: 2, codec: createCallCodec({ tokenizer, format: 'json', tools: tools.schemas() }) });
  const out = await agent.run('Look around');
  expect(out).toMatchObject({ reason: 'limit', answer: 'I listed the folder; nothing is left.' });
  const [first, closing] = server!.requests.map((r) => String(r.grammar));
  expect(first).toMatch(/^call ::= "<tool_call>"/m);
  expect(closing).toBe(noCallGrammar());
  expect(closing).not.toMatch(/call ::=|tool-name/);
});
