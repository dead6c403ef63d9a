import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseToolCalls } from '../../../../src/agent/parse/index.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../../src/agent/tools/schemas.ts';
import type { ToolFormat } from '../../../../src/model/tool-format.ts';

const parse = (reply: string, format: ToolFormat = 'xml') => parseToolCalls(reply, { format, tools: BUILTIN_TOOL_SCHEMAS });
const calls = (reply: string, format: ToolFormat = 'xml') => parse(reply, format).calls.map((c) => ({ name: c.name, arguments: c.arguments }));

describe('parser: the proper formats', () => {
  it('XML: name, several parameters, multi-line values keep inner newlines, prose kept as text', () => {
    const r = parse('I will write it.\n<tool_call>\n<function=write_file>\n<parameter=path>\nindex.html\n</parameter>\n<parameter=content>\n<p>\n  hi\n</p>\n</parameter>\n</function>\n</tool_call>');
    expect(r.calls.map((c) => [c.name, c.arguments, c.via])).toEqual([['write_file', { path: 'index.html', content: '<p>\n  hi\n</p>' }, 'xml']]);
    expect(r.text).toBe('I will write it.');
  });

  it('JSON: one call per block, two blocks', () => {
    expect(calls('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.js"}}\n</tool_call>\n<tool_call>\n{"name": "serve", "arguments": {}}\n</tool_call>', 'json'))
      .toEqual([{ name: 'read_file', arguments: { path: 'a.js' } }, { name: 'serve', arguments: {} }]);
  });

  it('a reply without a call has no calls and its text is the answer', () => {
    expect(parse('Done: the game is in index.html.')).toEqual({ calls: [], text: 'Done: the game is in index.html.' });
    expect(parse('Call read_file(path) to read, or use {"a": 1}.').calls).toEqual([]);
  });

  it('XML values may hold </function>, other tags and a missing </parameter> before the next parameter', () => {
    expect(calls('<tool_call>\n<function=write_file>\n<parameter=path>\na.xml\n</parameter>\n<parameter=content>\n<function=x></function>\n<b>hi</b>\n</parameter>\n</function>\n</tool_call>'))
      .toEqual([{ name: 'write_file', arguments: { path: 'a.xml', content: '<function=x></function>\n<b>hi</b>' } }]);
    // Written inline (no newline after the tag, so never under the grammar), a value left open ends where
    // the next parameter opens, and the last one at </function>.
    expect(calls('<tool_call>\n<function=edit_file>\n<parameter=path>a.js\n<parameter=old>x</parameter>\n<parameter=new>y\n</function>\n</tool_call>'))
      .toEqual([{ name: 'edit_file', arguments: { path: 'a.js', old: 'x', new: 'y' } }]);
  });

  it('XML: a value that opens with the format\'s newline ends only at "\\n</parameter>", the grammar\'s rule (parse/xml-value.ts)', () => {
    // The HTML file of issue 26: "</parameter>" and "<parameter=x>" inside the value are text, as the grammar let them be.
    const content = '<p>Close a value with </parameter>, open one with <parameter=x> or\n<parameter=path>\non a line.</p>';
    expect(calls(`<tool_call>\n<function=write_file>\n<parameter=path>\ndoc.html\n</parameter>\n<parameter=content>\n${content}\n</parameter>\n</function>\n</tool_call>`))
      .toEqual([{ name: 'write_file', arguments: { path: 'doc.html', content } }]);
    // A value that begins with "</parameter>" is empty, as in the grammar; the template's empty value too.
    expect(calls('<tool_call>\n<function=edit_file>\n<parameter=path>\na.js\n</parameter>\n<parameter=old>\nx\n</parameter>\n<parameter=new>\n</parameter>\n</function>\n</tool_call>'))
      .toEqual([{ name: 'edit_file', arguments: { path: 'a.js', old: 'x', new: '' } }]);
    expect(calls('<tool_call>\n<function=edit_file>\n<parameter=path>\na.js\n</parameter>\n<parameter=old>\nx\n</parameter>\n<parameter=new>\n\n</parameter>\n</function>\n</tool_call>'))
      .toEqual([{ name: 'edit_file', arguments: { path: 'a.js', old: 'x', new: '' } }]);
  });

  it('XML: a value may hold "</tool_call>" and "<tool_call>" when the block is well formed', () => {
    const content = 'Write calls like\n<tool_call>\n<function=serve>\n</function>\n</tool_call>\nand wait.';
    const r = parse(`<tool_call>\n<function=write_file>\n<parameter=path>\nHOWTO.md\n</parameter>\n<parameter=content>\n${content}\n</parameter>\n</function>\n</tool_call>\nWritten.`);
    expect(r.calls.map((c) => [c.name, c.arguments])).toEqual([['write_file', { path: 'HOWTO.md', content }]]);
    expect(r.text).toBe('Written.');
  });

  it('XML: a "</tool_call>" ends the block when the value around it is never closed, or the next parameter opens first', () => {
    // No </parameter> anywhere after it: the model closed the block without closing the value.
    const unclosed = parse('<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=content>\nhi\n</tool_call>\nDone.');
    expect(unclosed.calls.map((c) => c.arguments)).toEqual([{ path: 'a.txt', content: 'hi' }]);
    expect(unclosed.text).toBe('Done.');
    // An inline value (never under the grammar) with a parameter opening before any </parameter>: the value
    // was left open, so the marker was the block's end.
    const nextFirst = parse('<tool_call>\n<function=write_file>\n<parameter=content>hi\n</tool_call>\nAlso <tool_call>\n<function=read_file>\n<parameter=path>b</parameter>\n</function>\n</tool_call>');
    expect(nextFirst.calls.map((c) => [c.name, c.arguments])).toEqual([['write_file', { content: 'hi' }], ['read_file', { path: 'b' }]]);
    expect(nextFirst.text).toBe('Also');
    // JSON arguments inside <function=NAME> are not parameters: the first marker still ends the block.
    const jsonInside = parse('<tool_call>\n<function=read_file>\n{"path": "a.js"}\n</tool_call>\n<parameter=path>\nx\n</parameter>');
    expect(jsonInside.calls.map((c) => [c.name, c.arguments])).toEqual([['read_file', { path: 'a.js' }]]);
  });

  it('keeps a name it does not know inside <tool_call> (the loop reports it)', () => {
    expect(calls('<tool_call>\n<function=delete_all>\n</function>\n</tool_call>')).toEqual([{ name: 'delete_all', arguments: {} }]);
  });
});

describe('parser: near misses', () => {
  it('a JSON code fence inside <tool_call>', () => {
    expect(calls('<tool_call>\n```json\n{"name": "read_file", "arguments": {"path": "a.js"}}\n```\n</tool_call>'))
      .toEqual([{ name: 'read_file', arguments: { path: 'a.js' } }]);
  });

  it('JSON arguments inside <function=NAME>', () => {
    expect(calls('<tool_call>\n<function=read_file>\n{"path": "a.js", "start_line": 5}\n</function>\n</tool_call>'))
      .toEqual([{ name: 'read_file', arguments: { path: 'a.js', start_line: 5 } }]);
  });

  it('<function name="x"> and <parameter name="p">', () => {
    expect(calls('<tool_call>\n<function name="edit_file">\n<parameter name="path">a.js</parameter>\n<parameter name="old">x</parameter>\n<parameter name="new">y</parameter>\n</function>\n</tool_call>'))
      .toEqual([{ name: 'edit_file', arguments: { path: 'a.js', old: 'x', new: 'y' } }]);
  });

  it('<invoke name="x"> without a <tool_call> wrapper', () => {
    const r = parse('Sure.\n<invoke name="list_dir">\n<parameter name="path">src</parameter>\n</invoke>');
    expect(r.calls.map((c) => [c.name, c.arguments, c.via])).toEqual([['list_dir', { path: 'src' }, 'invoke']]);
    expect(r.text).toBe('Sure.');
  });

  it('several calls in one block, and a block left unclosed at the end', () => {
    expect(calls('<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n<function=read_file>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>'))
      .toEqual([{ name: 'read_file', arguments: { path: 'a' } }, { name: 'read_file', arguments: { path: 'b' } }]);
    expect(calls('<tool_call>\n{"name": "serve", "arguments": {}}\n{"name": "preview_logs", "arguments": {"cursor": 0}}', 'json'))
      .toEqual([{ name: 'serve', arguments: {} }, { name: 'preview_logs', arguments: { cursor: 0 } }]);
    expect(calls('<tool_call>\n<function=read_file>\n<parameter=path>\nx.js\n', 'xml')).toEqual([{ name: 'read_file', arguments: { path: 'x.js' } }]);
  });

  it('a fenced ```tool JSON block', () => {
    const r = parse('Writing now.\n```tool\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}\n```\nThen serve.', 'json');
    expect(r.calls.map((c) => [c.name, c.arguments, c.via])).toEqual([['write_file', { path: 'a.txt', content: 'hi' }, 'fence']]);
    expect(r.text).toBe('Writing now.\n\nThen serve.');
  });

  it('bare JSON with name and arguments at the end of a reply (arguments as a JSON string too)', () => {
    expect(calls('I will serve it.\n{"name": "serve", "arguments": {"path": "dist"}}', 'json')).toEqual([{ name: 'serve', arguments: { path: 'dist' } }]);
    expect(calls('{"name": "read_file", "arguments": "{\\"path\\": \\"a.js\\"}"}\n', 'json')).toEqual([{ name: 'read_file', arguments: { path: 'a.js' } }]);
    expect(calls('{"name": "read_file", "arguments": {"path": "a.js"}}\nand more text after', 'json')).toEqual([]);
    expect(calls('Example: {"name": "Bob", "arguments": {}}', 'json')).toEqual([]); // not a declared tool
  });

  it('positional calls matched to parameter names, with keywords and literals', () => {
    expect(calls('search("foo", "src")')).toEqual([{ name: 'search', arguments: { pattern: 'foo', path: 'src' } }]);
    expect(calls('Let me check.\n`read_file(path="a.js", start_line=10)`')).toEqual([{ name: 'read_file', arguments: { path: 'a.js', start_line: 10 } }]);
    expect(calls("<tool_call>\nwrite_file('a.txt', 'x\\ny', true)\n</tool_call>")).toEqual([{ name: 'write_file', arguments: { path: 'a.txt', content: 'x\ny', append: true } }]);
    expect(calls('You could use search("foo") later if needed.')).toEqual([]); // in a sentence: not a call
  });
});

describe('parse-calls CLI', () => {
  // Spawns the CLI (npx + tsx start-up: about a second idle, far more on a loaded 2-core CI box).
  it('prints the repaired calls as a JSON array', { timeout: 120_000 }, () => {
    const out = execFileSync('npx', ['tsx', 'bin/parse-calls.ts', '--format', 'xml'], {
      input: '<tool_call>\n<function=write_file>\n<parameter=file_path>\n./a.txt\n</parameter>\n<parameter=contents>\nhi\n</parameter>\n<parameter=append>\nfalse\n</parameter>\n</function>\n</tool_call>',
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual([{ name: 'write_file', arguments: { path: 'a.txt', content: 'hi', append: false } }]);
  });
});
