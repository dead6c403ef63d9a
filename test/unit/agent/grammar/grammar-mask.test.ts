import { beforeAll, describe, expect, it } from 'vitest';
import { DEAD, LazyDfa } from '../../../../src/agent/grammar/dfa.ts';
import { jsonGrammar } from '../../../../src/agent/grammar/json-grammar.ts';
import { ToolCallGrammar } from '../../../../src/agent/grammar/tool-call-mask.ts';
import { BYTE_CLASS, buildVocabIndex, vocabIndexFor } from '../../../../src/agent/grammar/vocab-trie.ts';
import { xmlGrammar } from '../../../../src/agent/grammar/xml-grammar.ts';
import { parseToolCalls } from '../../../../src/agent/parse/index.ts';
import { BUILTIN_TOOL_SCHEMAS, READ_FILE, WRITE_FILE } from '../../../../src/agent/tools/schemas.ts';
import { loadBundledQwen3Tokenizer } from '../../../../src/model/bundled-tokenizer.ts';
import { renderToolCall, type ToolFormat } from '../../../../src/model/tool-format.ts';
import { tokenByteTableFrom, type Tokenizer } from '../../../../src/model/tokenizer.ts';

let tok: Tokenizer;
// Loading the real 151,669-token vocabulary takes ~2 s alone and over 10 s (vitest's default hook timeout,
// which skipped every test here) on a loaded 2-core CI box: the hook gets its own bound.
beforeAll(async () => { tok = await loadBundledQwen3Tokenizer(); }, 120_000);

const enc = new TextEncoder();
const allowed = (bits: Uint32Array, id: number) => ((bits[id >>> 5] >>> (id & 31)) & 1) === 1;

/** Feeds text bytes to a DFA state. */
function walk(dfa: LazyDfa<unknown>, state: number, text: string): number {
  let s = state;
  for (const b of enc.encode(text)) { if (s < 0) break; s = dfa.step(s, b); }
  return s;
}

/** The mask by brute force: walk every token of the vocabulary from `state`. */
function bruteMask(dfa: LazyDfa<unknown>, state: number, bytes: readonly Uint8Array[]): Uint32Array {
  const bits = new Uint32Array(Math.ceil(bytes.length / 32));
  for (let id = 0; id < bytes.length; id++) {
    if (bytes[id].length === 0) continue;
    if (dfa.stepToken(state, id, bytes[id]) >= 0) bits[id >>> 5] |= 1 << (id & 31);
  }
  return bits;
}

const CALLS = [
  { name: 'write_file', arguments: { path: 'game.js', content: 'const a = "x";\nif (a < 2) { go(); }\n</div>\n\n  // done' } },
  { name: 'read_file', arguments: { path: 'index.html', start_line: 3 } },
];

describe('vocabulary trie', () => {
  it('lists every non-added token once, and each node covers exactly the tokens under its prefix', () => {
    const v = vocabIndexFor(tok);
    const bytes = tok.allTokenBytes();
    expect(v.sortedIds.length).toBe(tok.vocabSize - tok.addedTokens.size);
    expect(new Set(v.sortedIds).size).toBe(v.sortedIds.length);
    const latin = (b: Uint8Array) => String.fromCharCode(...b);
    const path: number[] = [];
    for (let i = 0; i < v.nodeCount; i++) {
      path.length = v.depth[i] - 1;
      path.push(v.byte[i]);
      if (i % 4999 !== 0) continue;
      const prefix = String.fromCharCode(...path);
      let classes = 0;
      for (let p = v.tokStart[i]; p < v.tokEnd[i]; p++) {
        const t = latin(bytes[v.sortedIds[p]]);
        expect(t.startsWith(prefix)).toBe(true);
        expect(t === prefix).toBe(p < v.tokStart[i] + v.tokHere[i]);
        for (let k = prefix.length; k < t.length; k++) classes |= BYTE_CLASS[t.charCodeAt(k)];
      }
      expect(v.below[i]).toBe(classes);
      if (v.tokStart[i] > 0) expect(latin(bytes[v.sortedIds[v.tokStart[i] - 1]]).startsWith(prefix)).toBe(false);
      if (v.tokEnd[i] < v.sortedIds.length) expect(latin(bytes[v.sortedIds[v.tokEnd[i]]]).startsWith(prefix)).toBe(false);
    }
  });
});

describe.each(['xml', 'json'] as ToolFormat[])('%s tool-call grammar on the real vocabulary', (format) => {
  it('every mask equals the brute-force walk of all 151,669 tokens', () => {
    const grammar = new ToolCallGrammar({ tokenizer: tok, format, tools: BUILTIN_TOOL_SCHEMAS });
    const ids = tok.encode(CALLS.map((c) => renderToolCall(format, c)).join('\n'));
    const bytes = tok.allTokenBytes();
    const src = grammar.cursor();
    const checked = new Set<string>();
    for (const id of ids) {
      const c = src.next();
      if (c?.bits) {
        expect(c.greedy === true).toBe(format === 'json');
        const key = String((src as unknown as { state: number }).state);
        if (!checked.has(key) && checked.size < 14) {
          checked.add(key);
          expect(c.bits).toEqual(bruteMask(grammar.dfa, Number(key), bytes));
        }
        expect(allowed(c.bits, id)).toBe(true);
      }
      src.accept(id);
    }
    expect(checked.size).toBeGreaterThan(8);
    expect(src.broken).toBe(false);
    expect(src.callsClosed).toBe(2);
    expect(src.next()).toBeNull(); // free again after </tool_call>
  });

  it('forbids an undeclared tool name and special tokens inside the call', () => {
    const grammar = new ToolCallGrammar({ tokenizer: tok, format, tools: BUILTIN_TOOL_SCHEMAS });
    const open = grammar.dfa.start;
    const lead = format === 'xml' ? '\n<function=' : '\n{"name": "';
    expect(walk(grammar.dfa, open, `${lead}read_file`)).toBeGreaterThanOrEqual(0);
    expect(walk(grammar.dfa, open, `${lead}delete_file`)).toBe(DEAD);
    const inName = walk(grammar.dfa, open, `${lead}read`);
    const bits = grammar.dfa.mask(inName);
    expect(allowed(bits, tok.special.imEnd)).toBe(false);
    expect(allowed(bits, tok.special.toolCallEnd!)).toBe(false);
    expect(allowed(bits, tok.encode('_file')[0])).toBe(true);
  });
});

describe('XML grammar rules', () => {
  const dfa = () => new ToolCallGrammar({ tokenizer: tok, format: 'xml', tools: [READ_FILE, WRITE_FILE] }).dfa;

  it('allows </function> only once the required parameters are present, and no parameter twice', () => {
    const d = dfa();
    const afterPath = walk(d, d.start, '\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n');
    expect(afterPath).toBeGreaterThanOrEqual(0);
    expect(walk(d, afterPath, '</function>')).toBe(DEAD);
    expect(walk(d, afterPath, '<parameter=path>')).toBe(DEAD);
    expect(walk(d, afterPath, '<parameter=colour>')).toBe(DEAD);
    const bits = d.mask(afterPath);
    expect(allowed(bits, tok.tokenToId('</')!)).toBe(false);
    expect(allowed(bits, tok.tokenToId('<')!)).toBe(true);
    const afterContent = walk(d, afterPath, '<parameter=content>\nhi\n</parameter>\n');
    expect(allowed(d.mask(afterContent), tok.tokenToId('</')!)).toBe(true);
    const close = walk(d, afterContent, '</function>\n');
    expect(d.mask(close).reduce((n, w) => n + popcount(w), 0)).toBe(1); // only the </tool_call> token
    expect(allowed(d.mask(close), tok.special.toolCallEnd!)).toBe(true);
    expect(d.isDone(d.stepToken(close, tok.special.toolCallEnd!, new Uint8Array()))).toBe(true);
  });

  it('lets a value hold any text, "</parameter" without its newline, and tags of other kinds', () => {
    const d = dfa();
    const value = walk(d, d.start, '\n<function=write_file>\n<parameter=content>\n');
    const inside = walk(d, value, '<div>\n</div>\n</parameter \n</param>\n</function>\n<|im_end|> ☃');
    expect(inside).toBeGreaterThanOrEqual(0);
    expect(allowed(d.mask(inside), tok.special.imEnd)).toBe(false);
    expect(allowed(d.mask(inside), tok.tokenToId('Ċ</')!)).toBe(true);
  });
});

describe('the XML grammar and the parser agree on a value holding the call markers', () => {
  it('a value holds the text "</tool_call>" (ordinary tokens), never the added </tool_call> token; the parser keeps it in the value', () => {
    const d = new ToolCallGrammar({ tokenizer: tok, format: 'xml', tools: [READ_FILE, WRITE_FILE] }).dfa;
    const value = walk(d, d.start, '\n<function=write_file>\n<parameter=path>\na.md\n</parameter>\n<parameter=content>\n');
    const written = 'calls end with </tool_call> and start with <tool_call>';
    // The markers spelled in ordinary tokens (a sampler may pick these; encode() would make added tokens of them).
    const ids = ['calls end with </', 'tool_call> and start with <', 'tool_call>'].flatMap((t) => tok.encode(t));
    expect(tok.decode(ids)).toBe(written);
    expect(ids).not.toContain(tok.special.toolCallEnd);
    expect(ids).not.toContain(tok.special.toolCall);
    let s = value;
    for (const id of ids) {
      expect(allowed(d.mask(s), id)).toBe(true);
      s = d.stepToken(s, id, tok.tokenBytes(id));
    }
    expect(allowed(d.mask(s), tok.special.toolCallEnd!)).toBe(false); // the added token cannot end a value
    const closed = walk(d, s, '\n</parameter>\n</function>\n');
    expect(allowed(d.mask(closed), tok.special.toolCallEnd!)).toBe(true);
    const answer = `<tool_call>\n<function=write_file>\n<parameter=path>\na.md\n</parameter>\n<parameter=content>\n${tok.decode(ids)}\n</parameter>\n</function>\n</tool_call>`;
    expect(parseToolCalls(answer, { format: 'xml', tools: [READ_FILE, WRITE_FILE] }).calls.map((c) => c.arguments)).toEqual([{ path: 'a.md', content: written }]);
  });
});

describe('tokens that span grammar boundaries', () => {
  it('a synthetic vocabulary: ">\\n<parameter=" and "path>\\nindex" in one token each', () => {
    const words = ['\n', '<', '>', '>\n', '>\n<parameter=', 'path', 'path>\nindex', 'content', '.html', '\n</parameter>\n</function>\n', '\n</parameter>\n<', 'x', '<function=', 'read_file', 'write_file>\n<parameter=path'];
    const bytes = words.map((w) => enc.encode(w));
    const closeId = bytes.length;
    bytes.push(enc.encode('</tool_call>'));
    const v = buildVocabIndex(tokenByteTableFrom(bytes), [{ id: closeId, content: '</tool_call>' }]);
    const d = new LazyDfa(xmlGrammar([READ_FILE, WRITE_FILE], 'symbol') as never, v) as LazyDfa<unknown>;
    const ids = (bits: Uint32Array) => words.map((_, i) => i).filter((i) => allowed(bits, i)).map((i) => words[i]);
    const afterName = walk(d, d.start, '\n<function=write_file');
    expect(ids(d.mask(afterName))).toEqual(['>', '>\n', '>\n<parameter=']);
    const readOpen = walk(d, d.start, '\n<function=read_file>\n<parameter=');
    expect(ids(d.mask(readOpen))).toEqual(['path', 'path>\nindex']);
    const inValue = walk(d, readOpen, 'path>\nindex');
    expect(ids(d.mask(inValue))).toEqual(['\n', '<', '>', '>\n', '>\n<parameter=', 'path', 'path>\nindex', 'content', '.html', '\n</parameter>\n</function>\n', '\n</parameter>\n<', 'x', '<function=', 'read_file', 'write_file>\n<parameter=path']);
    expect(allowed(d.mask(inValue), closeId)).toBe(false);
    const start = walk(d, d.start, '\n<function=');
    expect(ids(d.mask(start))).toEqual(['read_file', 'write_file>\n<parameter=path']); // name, '>', '\n', tag in one
  });

  it('the real tokenizer\'s encoding of a call (with ">\\n" and "\\n</" tokens) passes the grammar', () => {
    const ids = tok.encode(renderToolCall('xml', { name: 'read_file', arguments: { path: 'index.html' } }));
    const texts = ids.map((id) => tok.decode([id]));
    expect(texts.some((t) => t.length > 1 && t.startsWith('>') && t.includes('\n'))).toBe(true);
    const src = new ToolCallGrammar({ tokenizer: tok, format: 'xml', tools: BUILTIN_TOOL_SCHEMAS }).cursor();
    for (const id of ids) {
      const c = src.next();
      if (c?.bits) expect(allowed(c.bits, id)).toBe(true);
      src.accept(id);
    }
    expect(src.callsClosed).toBe(1);
  });
});

describe('a vocabulary without a </tool_call> token', () => {
  it.each(['xml', 'json'] as const)('%s: the close tag is read as text', (format) => {
    const g = format === 'xml' ? xmlGrammar([READ_FILE], 'text') : jsonGrammar([READ_FILE], 'text');
    const d = new LazyDfa(g as never, vocabIndexFor(tok)) as LazyDfa<unknown>;
    const call = format === 'xml' ? '\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n' : '\n{"name": "read_file", "arguments": {"path": "a"}}\n';
    const before = walk(d, d.start, call);
    expect(before).toBeGreaterThanOrEqual(0);
    expect(allowed(d.mask(before), tok.special.toolCallEnd!)).toBe(false);
    expect(d.isDone(walk(d, before, '</tool_call>'))).toBe(true);
  });
});

describe('JSON grammar rules', () => {
  it('holds only the name; arguments must be a well-nested object of valid strings', () => {
    const g = jsonGrammar([READ_FILE], 'symbol');
    const d = new LazyDfa(g as never, vocabIndexFor(tok)) as LazyDfa<unknown>;
    const head = walk(d, d.start, '\n{"name": "read_file", "arguments": ');
    expect(head).toBeGreaterThanOrEqual(0);
    const full = walk(d, head, '{"anything": [1, {"y": "a\\"b\\\\"}], "n": null}}\n');
    expect(full).toBeGreaterThanOrEqual(0);
    expect(d.isDone(d.stepToken(full, tok.special.toolCallEnd!, new Uint8Array()))).toBe(true);
    expect(walk(d, head, '[1]')).toBe(DEAD);
    expect(walk(d, head, '{"a": "line\nbreak"}')).toBe(DEAD);
    expect(walk(d, head, '{"a": "\\q"}')).toBe(DEAD);
    expect(walk(d, head, '{"a": [1}')).toBe(DEAD);
    expect(walk(d, d.start, '\n{"name": "write_file"')).toBe(DEAD);
  });
});

describe('grammar cursor', () => {
  it('is free outside calls, follows tokens already generated, and stops constraining when the sampler ignored it', () => {
    const g = new ToolCallGrammar({ tokenizer: tok, format: 'xml', tools: BUILTIN_TOOL_SCHEMAS });
    const src = g.cursor(tok.encode('Let me look.\n<tool_call>'));
    expect(src.next()?.bits).toBeInstanceOf(Uint32Array);
    expect(g.cursor(tok.encode('Just text')).next()).toBeNull();
    const s2 = g.cursor(tok.encode('<tool_call>\n<function=nope'));
    expect(s2.broken).toBe(true);
    expect(s2.next()).toBeNull();
    const noTools = new ToolCallGrammar({ tokenizer: tok, format: 'xml', tools: [] });
    expect(noTools.cursor(tok.encode('<tool_call>')).next()).toBeNull();
  });
});

describe('call constraint (GenerateOptions.constraint)', () => {
  it('is told each new token in order and gives what a fresh cursor over the same tokens gives', () => {
    const g = new ToolCallGrammar({ tokenizer: tok, format: 'xml', tools: BUILTIN_TOOL_SCHEMAS });
    const ids = tok.encode('Let me look.\n<tool_call>\n<function=read_file>\n<parameter=');
    const constraint = g.constraint();
    const open = ids.indexOf(tok.special.toolCall!);
    for (let n = 0; n <= ids.length; n++) {
      const got = constraint(ids.slice(0, n));
      const fresh = g.cursor(ids.slice(0, n)).next();
      expect(got && { bits: got.bits, greedy: got.greedy }).toEqual(fresh && { bits: fresh.bits, greedy: fresh.greedy }); // (each cursor has its own report callback)
      expect(got === null).toBe(n <= open);        // free until the call opens, then masked
    }
    expect(g.constraint()(ids.slice(0, open + 1))).not.toBeNull();   // each answer gets its own
  });

  it('looks ahead over drafted tokens without moving: the masks a fresh cursor gives after each draft prefix', () => {
    const g = new ToolCallGrammar({ tokenizer: tok, format: 'json', tools: BUILTIN_TOOL_SCHEMAS });
    const ids = tok.encode('Sure.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "index.html"}}\n</tool_call>');
    const constraint = g.constraint();
    const shape = (c: ReturnType<typeof constraint>) => c && { bits: c.bits, greedy: c.greedy };
    for (const at of [0, 3, 5, 9]) {
      const ahead = constraint.lookahead!(ids.slice(0, at), ids.slice(at, at + 8));
      expect(ahead).toHaveLength(Math.min(8, ids.length - at));
      ahead.forEach((c, i) => expect(shape(c)).toEqual(shape(g.cursor(ids.slice(0, at + i + 1)).next())));
      // the constraint itself did not move: it still answers for `at`
      expect(shape(constraint(ids.slice(0, at)))).toEqual(shape(g.cursor(ids.slice(0, at)).next()));
    }
    const none = g.noCalls();
    expect(none.lookahead!([], [1, 2, 3]).map((c) => c?.bits)).toEqual([1, 2, 3].map(() => none([])!.bits));
  });
});

function popcount(w: number): number {
  let n = 0;
  while (w) { w &= w - 1; n++; }
  return n;
}
