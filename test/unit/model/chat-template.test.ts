import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/model/chat-types.ts';
import { READ_FILE, WRITE_FILE } from '../../../src/agent/tools/schemas.ts';
import { ChatTemplate, ChatTemplateError } from '../../../src/model/chat-template.ts';
import { detectToolFormat, renderToolCall, UnknownToolFormatError } from '../../../src/model/tool-format.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/chat-templates/${name}.jinja`, import.meta.url), 'utf8');

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You build web apps.' },
  { role: 'user', content: 'Make a.txt' },
  { role: 'assistant', content: '', tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'hi', append: true } }] },
  { role: 'tool', content: 'wrote a.txt' },
];

const WRITE_FILE_JSON = '{"type": "function", "function": {"name": "write_file", "description": "Create or replace a file. Keep each call under 100 lines; write longer files in parts with append: true.", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "File path"}, "content": {"type": "string", "description": "Full file content"}, "append": {"type": "boolean", "description": "Add to the end instead of replacing"}}, "required": ["path", "content"]}}}';
const XML_INSTRUCTIONS = '\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>';
const XML_CALL = '<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nhi\n</parameter>\n<parameter=append>\ntrue\n</parameter>\n</function>\n</tool_call>';

describe('chat templates (the three real Qwen templates)', () => {
  it('qwen3: JSON calls, tools as JSON, tool results as a user turn, thinking off', () => {
    const t = new ChatTemplate(fixture('qwen3'));
    expect(t.format).toBe('json');
    expect(t.render(conversation, [WRITE_FILE])).toBe(
      '<|im_start|>system\nYou build web apps.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n'
      + 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' + WRITE_FILE_JSON
      + '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n'
      + '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
      + '<|im_start|>user\nMake a.txt<|im_end|>\n'
      + '<|im_start|>assistant\n<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi", "append": true}}\n</tool_call><|im_end|>\n'
      + '<|im_start|>user\n<tool_response>\nwrote a.txt\n</tool_response><|im_end|>\n'
      + '<|im_start|>assistant\n<think>\n\n</think>\n\n');
  });

  it('qwen3: enable_thinking and add_generation_prompt are honoured; two tool results share one user turn', () => {
    const t = new ChatTemplate(fixture('qwen3'));
    const msgs: ChatMessage[] = [{ role: 'user', content: 'x' }, { role: 'tool', content: 'A' }, { role: 'tool', content: 'B' }];
    expect(t.render(msgs, [], { enableThinking: true })).toBe(
      '<|im_start|>user\nx<|im_end|>\n<|im_start|>user\n<tool_response>\nA\n</tool_response>\n<tool_response>\nB\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
    expect(t.render([{ role: 'user', content: 'x' }], [], { addGenerationPrompt: false })).toBe('<|im_start|>user\nx<|im_end|>\n');
  });

  it('qwen3-coder: XML calls with non-string values pre-stringified, tools as XML', () => {
    const t = new ChatTemplate(fixture('qwen3-coder'));
    expect(t.format).toBe('xml');
    expect(t.render(conversation, [WRITE_FILE])).toBe(
      '<|im_start|>system\nYou build web apps.\n\nYou have access to the following functions:\n\n<tools>\n<function>\n<name>write_file</name>\n'
      + '<description>Create or replace a file. Keep each call under 100 lines; write longer files in parts with append: true.</description>\n<parameters>\n'
      + '<parameter>\n<name>path</name>\n<type>string</type>\n<description>File path</description>\n</parameter>\n'
      + '<parameter>\n<name>content</name>\n<type>string</type>\n<description>Full file content</description>\n</parameter>\n'
      + '<parameter>\n<name>append</name>\n<type>boolean</type>\n<description>Add to the end instead of replacing</description>\n</parameter>\n'
      + '<required>[`path`, `content`]</required>\n</parameters>\n</function>\n</tools>' + XML_INSTRUCTIONS + '<|im_end|>\n'
      + '<|im_start|>user\nMake a.txt<|im_end|>\n'
      + '<|im_start|>assistant\n' + XML_CALL + '<|im_end|>\n'
      + '<|im_start|>user\n<tool_response>\nwrote a.txt\n</tool_response>\n<|im_end|>\n'
      + '<|im_start|>assistant\n');
  });

  it('qwen3.5: XML calls, tools as JSON, system text after the tools, empty think block', () => {
    const t = new ChatTemplate(fixture('qwen3.5'));
    expect(t.format).toBe('xml');
    expect(t.render(conversation, [WRITE_FILE])).toBe(
      '<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n' + WRITE_FILE_JSON + '\n</tools>'
      + XML_INSTRUCTIONS + '\n\nYou build web apps.<|im_end|>\n'
      + '<|im_start|>user\nMake a.txt<|im_end|>\n'
      + '<|im_start|>assistant\n<think>\n\n</think>\n\n' + XML_CALL + '<|im_end|>\n'
      + '<|im_start|>user\n<tool_response>\nwrote a.txt\n</tool_response><|im_end|>\n'
      + '<|im_start|>assistant\n<think>\n\n</think>\n\n');
  });

  it('renders null content as empty text instead of failing', () => {
    const t = new ChatTemplate(fixture('qwen3'));
    const msgs = [{ role: 'user', content: null }] as unknown as ChatMessage[];
    expect(t.render(msgs, [], { addGenerationPrompt: false })).toBe('<|im_start|>user\n<|im_end|>\n');
  });

  it('renderToolCall writes calls exactly as the templates do', () => {
    const call = { name: 'write_file', arguments: { path: 'a.txt', content: 'hi', append: true } };
    expect(renderToolCall('xml', call)).toBe(XML_CALL);
    expect(renderToolCall('json', call)).toBe('<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi", "append": true}}\n</tool_call>');
    const t = new ChatTemplate(fixture('qwen3'));
    const rendered = t.render([{ role: 'user', content: 'u' }, { role: 'assistant', content: '', tool_calls: [{ name: 'read_file', arguments: { path: 'x "y"', start_line: 3 } }] }], [READ_FILE], { addGenerationPrompt: false });
    expect(rendered).toContain(renderToolCall('json', { name: 'read_file', arguments: { path: 'x "y"', start_line: 3 } }));
  });
});

describe('tool format detection', () => {
  it('JSON for qwen3, XML for qwen3-coder and qwen3.5', () => {
    expect(detectToolFormat(fixture('qwen3'))).toBe('json');
    expect(detectToolFormat(fixture('qwen3-coder'))).toBe('xml');
    expect(detectToolFormat(fixture('qwen3.5'))).toBe('xml');
  });

  it('refuses a template with no call format, naming it', () => {
    expect(() => detectToolFormat('{{ messages }}', 'llama/tokenizer_config.json')).toThrow(UnknownToolFormatError);
    expect(() => detectToolFormat('{{ messages }}', 'llama/tokenizer_config.json')).toThrow(/^llama\/tokenizer_config\.json: the chat template shows no tool-call format/);
  });

  it('reads the template from tokenizer_config.json and names broken templates', () => {
    expect(ChatTemplate.fromTokenizerConfig({ chat_template: fixture('qwen3') }).format).toBe('json');
    expect(() => ChatTemplate.fromTokenizerConfig({}, 'm/tokenizer_config.json')).toThrow(ChatTemplateError);
    expect(() => ChatTemplate.fromTokenizerConfig({}, 'm/tokenizer_config.json')).toThrow(/m\/tokenizer_config\.json: has no chat_template/);
    expect(() => new ChatTemplate('{% if %}', 'broken')).toThrow(/^broken: does not parse/);
  });
});
