// /v1/chat/completions and /v1/completions on the replay model under the real Generator, tokenizer,
// templates and call grammar, on both call formats: what the client gets, and what reached the model.
import { beforeAll, describe, expect, it } from 'vitest';
import { renderToolCall, type ToolFormat } from '../../../src/model/tool-format.ts';
import type { ChatMessage, ToolSchema } from '../../../src/model/chat-types.ts';
import { runChat } from '../../../src/api/run-chat.ts';
import { runCompletion } from '../../../src/api/run-completion.ts';
import { ApiError } from '../../../src/api/api-error.ts';
import { MODEL, qwenTokenizer, replayApi, WEATHER_TOOLS } from './fixture.ts';

// Loading the real vocabulary takes ~2 s alone, far more on a loaded 2-core CI box.
beforeAll(async () => { await qwenTokenizer(); }, 120_000);

const ASK = [{ role: 'user', content: 'What is the weather in Paris?' }];
const schemas = WEATHER_TOOLS.map((t) => t.function) as unknown as ToolSchema[];
type Obj = Record<string, any>;

describe.each(['json', 'xml'] as ToolFormat[])('%s call format', (format) => {
  const call = (name: string, args: Record<string, unknown>) => renderToolCall(format, { name, arguments: args });

  it('a call in the model\'s format comes back as tool_calls with JSON-string arguments (repaired: "2" → 2)', async () => {
    const { model } = await replayApi(format, [`Let me check.\n${call('get_weather', { city: 'Paris', days: '2' })}`]);
    const r = await runChat(model, { model: MODEL, messages: ASK, tools: WEATHER_TOOLS });
    const choice = (r.response as Obj).choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Let me check.');
    expect(choice.message.tool_calls).toHaveLength(1);
    expect(choice.message.tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual({ city: 'Paris', days: 2 });
    expect(choice.message.tool_calls[0].id).toMatch(/^call_/);
  });

  it('tool_choice names a function: the grammar holds the call to that tool, whatever the model wanted', async () => {
    const reply = call('get_time', { city: 'Paris' });
    const auto = await replayApi(format, [reply]);
    const autoCall = ((await runChat(auto.model, { model: MODEL, messages: ASK, tools: WEATHER_TOOLS })).response as Obj).choices[0].message.tool_calls[0];
    expect(autoCall.function.name).toBe('get_time');
    const held = await replayApi(format, [reply]);
    const r = await runChat(held.model, { model: MODEL, messages: ASK, tools: WEATHER_TOOLS, tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    const choice = (r.response as Obj).choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls.map((c: Obj) => c.function.name)).toEqual(['get_weather']);
  });

  it('tool_choice "required" forces <tool_call> as the first token; "none" never lets one be sampled', async () => {
    const required = await replayApi(format, ['It is sunny.']);
    await runChat(required.model, { model: MODEL, messages: ASK, tools: WEATHER_TOOLS, tool_choice: 'required', max_tokens: 40 });
    const tok = required.tok;
    expect(required.recorded.results[0]!.ids[0]).toBe(tok.special.toolCall);
    const none = await replayApi(format, [call('get_weather', { city: 'Paris' })]);
    const r = await runChat(none.model, { model: MODEL, messages: ASK, tools: WEATHER_TOOLS, tool_choice: 'none' });
    expect(none.recorded.results[0]!.ids).not.toContain(tok.special.toolCall);
    expect((r.response as Obj).choices[0]).toMatchObject({ finish_reason: 'stop' });
    expect((r.response as Obj).choices[0].message.tool_calls).toBeUndefined();
  });

  it('assistant tool_calls and tool results go back in as the template writes them, tools in the template\'s list', async () => {
    const { model, recorded, tok, template } = await replayApi(format, ['It is 18 °C in Paris.']);
    const messages = [
      { role: 'system', content: 'You are terse.' },
      ...ASK,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 18}' },
    ];
    await runChat(model, { model: MODEL, messages, tools: WEATHER_TOOLS });
    const expected: ChatMessage[] = [
      { role: 'system', content: 'You are terse.' }, { role: 'user', content: ASK[0]!.content },
      { role: 'assistant', content: '', tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', content: '{"temp": 18}', name: 'get_weather' },
    ];
    const prompt = tok.encode(template.render(expected, schemas, { enableThinking: false, addGenerationPrompt: true }));
    expect(recorded.requests[0]!.prompt).toEqual(prompt);
    expect(tok.decode(prompt)).toContain(format === 'json' ? '"name": "get_weather"' : '<function=get_weather>');
    // The opening (system prompt + tools) is the pinned checkpoint, as the agent's is.
    const opening = tok.encode(template.render([{ role: 'system', content: 'You are terse.' }], schemas, { enableThinking: false, addGenerationPrompt: false }));
    expect(recorded.requests[0]!.pinAt).toBe(opening.length);
  });
});

describe('streaming, usage, stop strings, completions', () => {
  it('streams a role delta, content deltas, the finish, then usage counted exactly from our token ids', async () => {
    const reply = 'Sunny, 18 degrees, light wind from the west.';
    const { model, recorded, tok } = await replayApi('json', [reply]);
    const chunks: Obj[] = [];
    const r = await runChat(model, { model: MODEL, messages: ASK, stream: true, stream_options: { include_usage: true } }, { onChunk: (c) => chunks.push(c) });
    expect(r.response).toBeUndefined();
    expect(chunks[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe(reply);
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(3);   // token by token, not at the end
    expect(chunks.at(-2)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    const usage = chunks.at(-1)!.usage;
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(usage.prompt_tokens).toBe(recorded.requests[0]!.prompt.length);
    expect(usage.completion_tokens).toBe(tok.encode(reply).length);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('a streamed call: content before it, then one tool_calls delta, finish_reason tool_calls', async () => {
    const { model } = await replayApi('xml', [`On it.\n${renderToolCall('xml', { name: 'get_weather', arguments: { city: 'Oslo' } })}`]);
    const chunks: Obj[] = [];
    await runChat(model, { model: MODEL, messages: ASK, tools: WEATHER_TOOLS, stream: true }, { onChunk: (c) => chunks.push(c) });
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(content).toBe('On it.\n');
    const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(calls[0].function.arguments)).toEqual({ city: 'Oslo' });
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
  });

  it('a stop string ends the answer there: the text before it, generation stopped, finish "stop"', async () => {
    const { model, recorded } = await replayApi('json', ['one two three END four five six seven eight nine ten']);
    const r = await runChat(model, { model: MODEL, messages: ASK, stop: ['END'] });
    expect((r.response as Obj).choices[0]).toMatchObject({ message: { content: 'one two three ' }, finish_reason: 'stop' });
    expect(recorded.results[0]!.text).not.toContain('seven');     // the run stopped, not just the text cut
  });

  it('max_tokens caps the answer (finish "length"); past the context it is a 400', async () => {
    const { model } = await replayApi('json', ['one two three four five six seven eight nine ten']);
    const r = await runChat(model, { model: MODEL, messages: ASK, max_tokens: 3 });
    expect((r.response as Obj).choices[0].finish_reason).toBe('length');
    expect(r.usage.completion_tokens).toBe(3);
    await expect(runChat(model, { model: MODEL, messages: ASK, max_tokens: 5000 })).rejects.toMatchObject({ status: 400, message: /max_tokens/ });
  });

  it('bad bodies are 400s naming the field; another model is a 404', async () => {
    const { model } = await replayApi('json', ['x']);
    const bad = async (body: unknown) => runChat(model, body).then(() => 'ok', (e: ApiError) => `${e.status} ${e.message}`);
    expect(await bad({ model: MODEL, messages: [] })).toMatch(/^400 messages/);
    expect(await bad({ model: MODEL, messages: [{ role: 'wizard', content: 'x' }] })).toMatch(/^400 messages\[0\]\.role/);
    expect(await bad({ model: MODEL, messages: ASK, n: 2 })).toMatch(/^400 n/);
    expect(await bad({ model: MODEL, messages: ASK, tools: [{ type: 'function', function: { name: 'a b' } }] })).toMatch(/^400 tools\[0\]/);
    expect(await bad({ model: MODEL, messages: ASK, tools: WEATHER_TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } } })).toMatch(/^400 tool_choice/);
    expect(await bad({ model: MODEL, messages: [{ role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] })).toMatch(/^400 .*arguments/);
    expect(await bad({ model: MODEL, messages: ASK, temperature: 7 })).toMatch(/^400 temperature/);
    expect(await bad({ model: 'gpt-4', messages: ASK })).toMatch(/^404/);
  });

  it('/v1/completions: the prompt as it is (no template), text_completion whole or streamed, usage exact', async () => {
    const reply = ' jumps over the lazy dog.';
    const { model, recorded, tok } = await replayApi('json', [reply, reply, reply]);
    const r = await runCompletion(model, { model: MODEL, prompt: 'The quick brown fox', max_tokens: 50 });
    expect(recorded.requests[0]!.prompt).toEqual(tok.encode('The quick brown fox'));
    expect(r.response).toMatchObject({ object: 'text_completion', choices: [{ text: reply, finish_reason: 'stop' }], usage: { prompt_tokens: tok.encode('The quick brown fox').length, completion_tokens: tok.encode(reply).length } });
    const chunks: Obj[] = [];
    await runCompletion(model, { model: MODEL, prompt: 'The quick brown fox', max_tokens: 50, stream: true }, { onChunk: (c) => chunks.push(c) });
    expect(chunks.map((c) => c.choices[0].text).join('')).toBe(reply);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    // The prompt as token ids (OpenAI's array form, what our agent's backend sends to keep it exact): taken as given.
    const ids = [...tok.encode('The quick'), ...tok.encode(' brown fox')];
    const byIds = await runCompletion(model, { model: MODEL, prompt: ids, max_tokens: 50 });
    expect(recorded.requests[2]!.prompt).toEqual(ids);
    expect((byIds.response as Obj).usage.prompt_tokens).toBe(ids.length);
    await expect(runCompletion(model, { model: MODEL, prompt: [1, 2, 1e9] })).rejects.toMatchObject({ status: 400, message: /^prompt/ });
  });
});
