// The live view (AnswerStream) splits a streaming answer into blocks exactly where the parser does
// (parse/blocks.ts): fed every prefix of an answer, it never shows a block the parser does not find,
// and each card's last text is that block's body.
import { describe, expect, it } from 'vitest';
import { AnswerStream } from '../../../src/agent/stream.ts';
import type { AgentEvent } from '../../../src/agent/events.ts';
import { parseToolCalls } from '../../../src/agent/parse/index.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../src/agent/tools/schemas.ts';
import type { ToolFormat } from '../../../src/model/tool-format.ts';

/** Streams `answer` one character at a time; the cards (raw text per call) and the largest number of cards ever shown. */
function streamCharByChar(answer: string): { raws: string[]; shownText: string; history: string[][] } {
  const events: AgentEvent[] = [];
  const s = new AnswerStream(1, 0, (e) => events.push(e));
  const history: string[][] = [];
  const raws: string[] = [];
  for (let n = 1; n <= answer.length; n++) {
    s.update(answer.slice(0, n));
    for (const e of events.splice(0)) {
      if (e.type === 'call-start') raws[e.call] = '';
      if (e.type === 'call-args') raws[e.call] = e.raw;
      if (e.type === 'text') history.push(['text', e.delta]);
    }
    history.push([...raws]);
  }
  const shownText = history.filter((h) => h[0] === 'text').map((h) => h[1]).join('');
  return { raws, shownText, history: history.filter((h) => h[0] !== 'text') };
}

const calls = (answer: string, format: ToolFormat) => parseToolCalls(answer, { format, tools: BUILTIN_TOOL_SCHEMAS }).calls;

describe('the live view reads blocks as the parser does', () => {
  it('JSON: "</tool_call>" and "<tool_call>" inside a string stay in the one card all along', () => {
    const content = 'Call format: <tool_call>{"name": "x"}</tool_call> and that is it';
    const body = JSON.stringify({ name: 'write_file', arguments: { path: 'README.md', content } });
    const answer = `Writing the notes.\n<tool_call>\n${body}\n</tool_call>`;
    const { raws, shownText, history } = streamCharByChar(answer);
    expect(shownText).toBe('Writing the notes.\n');
    expect(raws).toEqual([body]);
    expect(Math.max(...history.map((h) => h.length))).toBe(1);
    // Every card shown meanwhile is a prefix of the final one: never cut at the marker in the string.
    for (const h of history) if (h.length > 0) expect(body.startsWith(h[0]!)).toBe(true);
    expect(calls(answer, 'json').map((c) => c.arguments.content)).toEqual([content]);
  });

  it('XML: "</tool_call>" inside a parameter value stays in the card, and the parser keeps it in the value', () => {
    const content = 'a </tool_call> b\n<tool_call> c';
    const body = `<function=write_file>\n<parameter=path>\nnotes.md\n</parameter>\n<parameter=content>\n${content}\n</parameter>\n</function>`;
    const answer = `<tool_call>\n${body}\n</tool_call>\nDone.`;
    const { raws, history } = streamCharByChar(answer);
    expect(raws).toEqual([body]);
    expect(Math.max(...history.map((h) => h.length))).toBe(1);
    for (const h of history) if (h.length > 0) expect(body.startsWith(h[0]!)).toBe(true);
    const parsed = parseToolCalls(answer, { format: 'xml', tools: BUILTIN_TOOL_SCHEMAS });
    expect(parsed.calls.map((c) => c.arguments)).toEqual([{ path: 'notes.md', content }]);
    expect(parsed.text).toBe('Done.');
  });

  it('two ordinary blocks are two cards, the close tag never shows half written', () => {
    const a = '{"name": "read_file", "arguments": {"path": "a.js"}}';
    const b = '<function=serve>\n</function>';
    const { raws, history } = streamCharByChar(`<tool_call>\n${a}\n</tool_call>\n<tool_call>\n${b}\n</tool_call>`);
    expect(raws).toEqual([a, b]);
    const halfClose = /<\/t(o(o(l(_(c(a(l(l)?)?)?)?)?)?)?)?$/;
    for (const h of history) for (const raw of h) expect(raw).not.toMatch(halfClose);
  });

  it('a JSON block that does not read still ends at a marker outside its strings', () => {
    // The closing brace is missing: the marker is outside every string, so the block ends there (as in the parser).
    const answer = '<tool_call>\n{"name": "serve", "arguments": {}\n</tool_call>\nThen <tool_call>\n{"name": "list_dir", "arguments": {}}\n</tool_call>';
    const { raws } = streamCharByChar(answer);
    expect(raws).toEqual(['{"name": "serve", "arguments": {}', '{"name": "list_dir", "arguments": {}}']);
    expect(calls(answer, 'json').map((c) => c.name)).toEqual(['serve', 'list_dir']);
  });

  it('XML that is not well formed ends at the first marker: a value left open, then the next call', () => {
    // The model forgot </parameter> on inline values (never written under the grammar): the </tool_call> is
    // the block's end, and the next block is a call of its own.
    const answer = '<tool_call>\n<function=write_file>\n<parameter=path>a.txt\n<parameter=content>hi\n</tool_call>\n'
      + '<tool_call>\n<function=read_file>\n<parameter=path>a.txt</parameter>\n</function>\n</tool_call>';
    const { raws } = streamCharByChar(answer);
    expect(raws).toHaveLength(2);
    expect(raws[1]).toBe('<function=read_file>\n<parameter=path>a.txt</parameter>\n</function>');
    expect(calls(answer, 'xml').map((c) => [c.name, c.arguments])).toEqual([
      ['write_file', { path: 'a.txt', content: 'hi' }],
      ['read_file', { path: 'a.txt' }],
    ]);
  });
});
