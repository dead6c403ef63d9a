// Turn texts found from the model's own chat template (no template hard-coded), for the three real
// Qwen templates: the pieces put together give exactly what the template renders for the conversation.
import { expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { TurnRenderer } from '../../../src/agent/turns.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../src/agent/tools/schemas.ts';
import { SYSTEM_PROMPT } from '../../../src/agent/system-prompt.ts';
import type { Backend } from '../../../src/agent/backend.ts';
import type { ChatMessage } from '../../../src/model/chat-types.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/chat-templates/${name}.jinja`, import.meta.url), 'utf8');

test.each(['qwen3', 'qwen3-coder', 'qwen3.5'])('%s: opening + turns = the rendered conversation', (name) => {
  const template = new ChatTemplate(fixture(name));
  const tools = [...BUILTIN_TOOL_SCHEMAS];
  const render = (m: ChatMessage[]) => template.render(m, tools, { enableThinking: false, addGenerationPrompt: true });
  const backend = { render, encode: () => [], decode: () => '' } as unknown as Backend;
  const turns = new TurnRenderer(backend, SYSTEM_PROMPT, tools);
  const sys: ChatMessage = { role: 'system', content: SYSTEM_PROMPT };
  expect(render([sys, { role: 'user', content: 'Make a game' }])).toBe(turns.opening + turns.userTurn('Make a game') + turns.generationPrompt);
  expect(turns.opening).toContain(SYSTEM_PROMPT);
  expect(turns.opening).toContain('write_file');
  const results = [{ name: 'read_file', content: '1| hello' }, { name: 'list_dir', content: 'a.txt (3 B)' }];
  const withResults = render([sys, { role: 'user', content: 'x' }, { role: 'assistant', content: '', tool_calls: results.map((r) => ({ name: r.name, arguments: {} })) },
    ...results.map((r): ChatMessage => ({ role: 'tool', content: r.content }))]);
  expect(withResults.endsWith(turns.resultsTurn(results) + turns.generationPrompt)).toBe(true);
  expect(turns.resultsTurn(results)).toContain('1| hello');
  expect(turns.assistantClose).toBe('<|im_end|>\n');
});

test.each(['qwen3', 'qwen3-coder', 'qwen3.5'])('%s: the contents of the system turn (tools in it) and of a results turn, for a server that renders them', (name) => {
  const template = new ChatTemplate(fixture(name));
  const tools = [...BUILTIN_TOOL_SCHEMAS];
  const render = (m: ChatMessage[], t = tools) => template.render(m, t, { enableThinking: false, addGenerationPrompt: true });
  const backend = { render, encode: () => [], decode: () => '' } as unknown as Backend;
  const turns = new TurnRenderer(backend, SYSTEM_PROMPT, tools);
  const system = turns.systemContent();
  expect(system).toContain(SYSTEM_PROMPT);
  expect(system).toContain('write_file');
  // Given as a plain system message without tools, it renders to the opening the tools make.
  expect(render([{ role: 'system', content: system! }, { role: 'user', content: 'a' }], []).startsWith(turns.opening)).toBe(true);
  const results = turns.resultsTurn([{ name: 'read_file', content: '1| hello' }]);
  const inside = turns.userContentOf(results);
  expect(inside).toContain('1| hello');
  expect(turns.userTurn('q').replace('q', inside!)).toBe(results);  // the same wrapper as a user turn
  expect(turns.userContentOf('<|im_start|>assistant\nx<|im_end|>\n')).toBeNull();
  const answer = turns.assistantContentWithCalls('Reading.', [{ name: 'read_file', arguments: { path: 'a.txt' } }]);
  expect(answer.startsWith('Reading.')).toBe(true);
  expect(answer).toContain('read_file');
});
