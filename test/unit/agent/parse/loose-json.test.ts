// The loose JSON reader: standard JSON reads exactly as JSON.parse reads it (no mends); each near miss
// is read as a careful reader would and named; nothing is ever evaluated.
import { describe, expect, it } from 'vitest';
import { parseLooseJson, readLooseValue, type JsonMend } from '../../../../src/agent/parse/loose-json.ts';
import { Sfc32 } from '../../../../src/model/tiny/prng.ts';

const read = (text: string, closeAtEnd = false) => parseLooseJson(text, { closeAtEnd });

describe('standard JSON', () => {
  const prng = new Sfc32(5);
  const rand = () => prng.nextU32() / 2 ** 32;
  const CHARS = ['a', ' ', '"', "'", '\\', '\n', '\u0001', '\u2028', 'é', '😀', '{', '}', '/', 'True', '\t'];
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 3 || r < 0.3) return [() => Math.floor(rand() * 1e6) / 100 - 5000, () => rand() < 0.5, () => null,
      () => Array.from({ length: Math.floor(rand() * 6) }, () => CHARS[Math.floor(rand() * CHARS.length)]).join('')][Math.floor(rand() * 4)]!();
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [`k${i}${CHARS[Math.floor(rand() * CHARS.length)]}`, value(depth + 1)]));
  };

  it('500 random values, any indentation: the same value as JSON.parse and no mends', () => {
    for (let i = 0; i < 500; i++) {
      const text = JSON.stringify(value(0), null, [undefined, 2, '\t'][i % 3]);
      expect(read(text)).toEqual({ value: JSON.parse(text), mends: [] });
    }
  });

  it('"__proto__" is an ordinary key, as in JSON.parse', () => {
    const out = read('{"__proto__": {"x": 1}, "a": 2}')!.value as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    const mended = read("{'__proto__': {'polluted': True}}")!.value as Record<string, unknown>;
    expect(Object.keys(mended)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('each near miss, named', () => {
  const cases: [string, unknown, JsonMend[]][] = [
    ['{"a": "x\ny\tz"}', { a: 'x\ny\tz' }, ['control-chars']],
    ["{'a': 'b', 'c': [True, False, None]}", { a: 'b', c: [true, false, null] }, ['python']],
    ['{"a": "it\'s"}', { a: "it's" }, []],                                   // an apostrophe in JSON is fine
    ["{'a': \"it's\", 'b': 'say \"hi\"'}", { a: "it's", b: 'say "hi"' }, ['python']],
    ["{'a': 'it\\'s'}", { a: "it's" }, ['python']],                         // \' is how Python writes it
    ['{a: 1, $b_c: 2, d-e: 3}', { a: 1, $b_c: 2, 'd-e': 3 }, ['unquoted-keys']],
    ['{"a": [1, 2,], "b": 3,}', { a: [1, 2], b: 3 }, ['trailing-comma']],
    ['{"a": "don\\\'t \\d+ \\$"}', { a: "don't \\d+ \\$" }, ['bad-escape']],
    ['{"a": "<p class="x">hi</p>", "b": 1}', { a: '<p class="x">hi</p>', b: 1 }, ['inner-quotes']],
    ["{'a': 'it's here'}", { a: "it's here" }, ['python', 'inner-quotes']],
  ];
  it.each(cases)('%s', (text, value, mends) => {
    expect(read(text)).toEqual({ value, mends });
  });

  it('closes objects and arrays left open at the very end, only when asked', () => {
    expect(read('{"a": {"b": [1, 2', true)).toEqual({ value: { a: { b: [1, 2] } }, mends: ['unclosed'] });
    expect(read('{"a": {"b": [1, 2')).toBeNull();
    expect(read('{"a": "never ends', true)).toBeNull();                    // a string cut off is not guessed
  });

  it('reads one value and says where it ends', () => {
    expect(readLooseValue('x {"a": 1} tail', 1)).toEqual({ value: { a: 1 }, end: 10, mends: [] });
    expect(readLooseValue('[1, 2] [3]', 0)?.end).toBe(6);
  });
});

describe('what is not read', () => {
  it.each([
    "{'code': __import__('os').system('x')}",
    '{"a": eval("1")}',
    '{"a": 1 "b": 2}',
    '{"a" 1}',
    "{'a': lambda: 1}",
    '{"a": 01}',
    '{"a": undefined}',
    '',
  ])('%s', (text) => {
    expect(read(text, true)).toBeNull();
  });

  it('nesting deeper than 64 levels is refused, not a stack overflow', () => {
    expect(read('['.repeat(100_000) + ']'.repeat(100_000))).toBeNull();
    expect(read('['.repeat(60) + ']'.repeat(60))?.mends).toEqual([]);
  });
});
