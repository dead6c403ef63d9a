// The JSON near misses small models write when no grammar holds them (test/fixtures/tool-calls/json:
// one reply per .txt, the calls a careful reader takes from it and what was mended in its .json), read
// in process for both call formats and through `npm run -s parse-calls`. Clean calls get no mends.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseToolCalls } from '../../../../src/agent/parse/index.ts';
import { repairCall } from '../../../../src/agent/repairs.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../../src/agent/tools/schemas.ts';
import type { ToolFormat } from '../../../../src/model/tool-format.ts';
import { Sfc32 } from '../../../../src/model/tiny/prng.ts';

const CORPUS = path.resolve('test/fixtures/tool-calls/json');

interface Expected {
  why: string;
  calls: { name: string; arguments: Record<string, unknown> }[];
  repairs: string[][];
}

const corpus = readdirSync(CORPUS).filter((f) => f.endsWith('.txt')).sort().map((f) => ({
  name: f.replace(/\.txt$/, ''),
  reply: readFileSync(path.join(CORPUS, f), 'utf8'),
  expected: JSON.parse(readFileSync(path.join(CORPUS, f.replace(/\.txt$/, '.json')), 'utf8')) as Expected,
}));

function read(reply: string, format: ToolFormat) {
  return parseToolCalls(reply, { format, tools: BUILTIN_TOOL_SCHEMAS }).calls.map((c) => repairCall(c, BUILTIN_TOOL_SCHEMAS));
}

describe('the near-miss corpus', () => {
  it('holds the shapes the issue names and negatives', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(20);
    expect(corpus.filter((c) => c.expected.calls.length === 0).length).toBeGreaterThanOrEqual(4);
    for (const c of corpus) expect(c.expected.repairs.length, c.name).toBe(c.expected.calls.length);
  });

  describe.each(['json', 'xml'] as const)('read in the %s call format', (format) => {
    it.each(corpus.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const calls = read(c.reply, format);
      expect(calls.map((r) => ({ name: r.name, arguments: r.arguments })), c.expected.why).toEqual(c.expected.calls);
      expect(calls.map((r) => r.repairs)).toEqual(c.expected.repairs);
    });
  });
});

describe('the JSON block ends after its JSON', () => {
  it('a "</tool_call>" inside a string does not end the block early, nor does "<tool_call>" open one', () => {
    const content = 'a</tool_call>b<tool_call>c';
    const reply = `<tool_call>\n${JSON.stringify({ name: 'write_file', arguments: { path: 'x.md', content } })}\n</tool_call>\nDone.`;
    const r = parseToolCalls(reply, { format: 'json', tools: BUILTIN_TOOL_SCHEMAS });
    expect(r.calls.map((c) => c.arguments.content)).toEqual([content]);
    expect(r.text).toBe('Done.');
  });

  it('a block whose JSON does not read still ends at the first </tool_call>', () => {
    const r = parseToolCalls('<tool_call>\n{"name": "serve", "arguments": {}\n</tool_call>\nThen <tool_call>\n{"name": "list_dir", "arguments": {}}\n</tool_call>',
      { format: 'json', tools: BUILTIN_TOOL_SCHEMAS });
    expect(r.calls.map((c) => c.name)).toEqual(['serve', 'list_dir']);
    expect(r.text).toBe('Then');
  });
});

describe('no mend on a clean call', () => {
  const prng = new Sfc32(17);
  const rand = () => prng.nextU32() / 2 ** 32;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const PIECES = ['a', 'Z', ' ', '"', "'", '\\', '\n', '\t', '{', '}', '[', ']', ',', ':', '</tool_call>', '<tool_call>', 'é', '😀', '\\d', 'True', 'None', '<div class="x">'];
  const text = () => Array.from({ length: Math.floor(rand() * 12) }, () => pick(PIECES)).join('');

  it('200 random JSON calls (any content, any indentation) read exactly, with no mends and no repairs', () => {
    for (let i = 0; i < 200; i++) {
      const call = pick([
        () => ({ name: 'write_file', arguments: { path: `src/f${i}.js`, content: text(), append: rand() < 0.5 } }),
        () => ({ name: 'edit_file', arguments: { path: 'a.js', old: text() || 'x', new: text() } }),
        () => ({ name: 'search', arguments: { pattern: text() || 'x', path: 'src' } }),
        () => ({ name: 'read_file', arguments: { path: 'index.html', start_line: Math.floor(rand() * 500) } }),
        () => ({ name: 'serve', arguments: {} }),
      ])();
      const json = JSON.stringify(call, null, pick([undefined, 0, 1, 2, '\t']));
      const reply = `${pick(['', 'Sure.\n', 'Writing it now.\n'])}<tool_call>\n${json}\n</tool_call>`;
      for (const format of ['json', 'xml'] as const) {
        const [parsed, ...more] = parseToolCalls(reply, { format, tools: BUILTIN_TOOL_SCHEMAS }).calls;
        expect(more).toEqual([]);
        expect({ name: parsed!.name, arguments: parsed!.arguments }).toEqual(call);
        expect(parsed!.mends).toBeUndefined();
        expect(repairCall(parsed!, BUILTIN_TOOL_SCHEMAS).repairs).toEqual([]);
      }
    }
  });
});

describe('parse-calls CLI reads each shape', () => {
  const run = promisify(execFile);
  const shapes = ['raw-newlines-in-content', 'python-dict', 'namespaced-functions', 'close-tag-inside-string'];

  it('prints the intended calls (and with --repairs, what was mended)', async () => {
    // One CLI process per shape, started together (each takes about a second to start).
    const outs = await Promise.all(shapes.map(async (name) => {
      const c = corpus.find((x) => x.name === name)!;
      const child = run('npx', ['tsx', 'bin/parse-calls.ts', '--format', 'json', '--repairs'], { encoding: 'utf8' });
      child.child.stdin!.end(c.reply);
      return { c, out: JSON.parse((await child).stdout) as { name: string; arguments: unknown; repairs: string[] }[] };
    }));
    for (const { c, out } of outs) {
      expect(out.map((o) => ({ name: o.name, arguments: o.arguments })), c.name).toEqual(c.expected.calls);
      expect(out.map((o) => o.repairs), c.name).toEqual(c.expected.repairs);
    }
  }, 120_000); // four CLI processes (npx + tsx start-up each) on a loaded 2-core CI box: 60 s was too tight
});

describe('parse-calls --tools FILE', () => {
  const run = promisify(execFile);
  // Spawns the CLI (npx + tsx start-up: about a second idle, far more on a loaded 2-core CI box).
  it('checks a reply against other tools (OpenAI-style schemas), converting values by their declared type', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parse-calls-tools-'));
    const file = path.join(dir, 'tools.json');
    writeFileSync(file, JSON.stringify([{ type: 'function', function: {
      name: 'get_weather', description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, opts: { type: 'object' }, tags: { type: 'array' } }, required: ['city'] },
    } }]));
    const reply = '<tool>\n{"name": "get_weather", "arguments": {"city": "1984", "days": "3", "opts": "{\\"unit\\": \\"C\\"}", "tags": "[\\"a\\"]"}}\n</tool>';
    const child = run('npx', ['tsx', 'bin/parse-calls.ts', '--format', 'json', '--repairs', '--tools', file], { encoding: 'utf8' });
    child.child.stdin!.end(reply);
    expect(JSON.parse((await child).stdout)).toEqual([{
      name: 'get_weather', arguments: { city: '1984', days: 3, opts: { unit: 'C' }, tags: ['a'] },
      repairs: ['days "3" as a number', 'opts text as an object', 'tags text as an array'],
    }]);
    // Against the built-in tools the same reply names no declared tool, so it is not a call.
    const builtin = run('npx', ['tsx', 'bin/parse-calls.ts', '--format', 'json'], { encoding: 'utf8' });
    builtin.child.stdin!.end(reply);
    expect(JSON.parse((await builtin).stdout)).toEqual([]);
  }, 120_000);
});
