// The replay model under the real Generator and EngineBackend: the script comes out token by token as the
// tokenizer encodes it, bent by the caller's constraint, and every count and ending is the Generator's.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BackendRequest } from '../../../../src/agent/backend.ts';
import { RecordingBackend } from '../../../../src/agent/recording-backend.ts';
import { replayBackend } from '../../../../src/agent/replay/replay-engine.ts';
import { parseReplayJsonl, ReplayScriptError } from '../../../../src/agent/replay/script.ts';
import type { Constraint } from '../../../../src/model/generate-types.ts';
import { READ_FILE } from '../../../../src/agent/tools/schemas.ts';
import { loadBundledQwen3Tokenizer } from '../../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../../src/model/chat-template.ts';
import type { Tokenizer } from '../../../../src/model/tokenizer.ts';

const template = new ChatTemplate(readFileSync(new URL('../../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
let tok: Tokenizer;
// Loading the real 151,669-token vocabulary takes ~2 s alone and over 10 s (vitest's default hook timeout,
// which skipped every test here) on a loaded 2-core CI box: the hook gets its own bound.
beforeAll(async () => { tok = await loadBundledQwen3Tokenizer(); }, 120_000);

const backend = (replies: string[], contextSize = 8192) => new RecordingBackend(replayBackend({ tokenizer: tok, template, replies, contextSize }).backend);
const request = (prompt: number[], extra: Partial<BackendRequest> = {}): BackendRequest =>
  ({ prompt, maxNewTokens: 8192, stopTokens: [151645, 151643], ...extra });

/** A constraint that forbids one token at one step and allows everything else. */
function forbidOnce(step: number, id: number, vocab: number): Constraint {
  return (soFar) => {
    if (soFar.length !== step) return null;
    const bits = new Uint32Array(Math.ceil(vocab / 32)).fill(0xffffffff);
    bits[id >>> 5]! &= ~(1 << (id & 31));
    return { bits };
  };
}

describe('the replay model', () => {
  it('samples the scripted reply as the tokenizer encodes it and stops at <|im_end|>', async () => {
    const b = backend(['Hello world! <tool_call>\n{"name": "x"}\n</tool_call>']);
    const prompt = tok.encode(b.render([{ role: 'user', content: 'hi' }], [READ_FILE]));
    const seen: number[] = [];
    const r = await b.generate(request(prompt, { onToken: (id) => seen.push(id) }));
    expect(r.finish).toBe('stop-token');
    expect(r.ids).toEqual(tok.encode('Hello world! <tool_call>\n{"name": "x"}\n</tool_call>'));
    expect(r.ids).toContain(151657);
    expect(r.text).toBe('Hello world! <tool_call>\n{"name": "x"}\n</tool_call>');
    expect(seen).toEqual(r.ids);
    expect(r.stats).toMatchObject({ promptTokens: prompt.length, promptComputed: prompt.length, promptReused: 0, generated: r.ids.length });
    expect(b.requests).toHaveLength(1);
    expect(b.requests[0].prompt).toBe(prompt);
  });

  it('streams the text so far, whole characters even when a token splits one', async () => {
    const b = backend(['a 龘 b']);
    const texts: string[] = [];
    const r = await b.generate(request([1], { onText: (soFar) => texts.push(soFar) }));
    expect(texts.at(-1)).toBe('a 龘 b');
    expect(texts.every((t) => !t.includes('\uFFFD'))).toBe(true);
    expect(r.text).toBe('a 龘 b');
  });

  it('reuses the live cache when the next prompt extends it, else the pinned checkpoint, else nothing', async () => {
    const b = backend(['one', 'two', 'three', 'four']);
    const opening = tok.encode('<|im_start|>system\nsys<|im_end|>\n');
    const p1 = [...opening, ...tok.encode('<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n')];
    const r1 = await b.generate(request(p1, { pinAt: opening.length }));
    expect(r1.stats.promptReused).toBe(0);
    // Next prompt: the reply's tokens, <|im_end|>, then new text: everything before is reused.
    const p2 = [...p1, ...r1.ids, 151645, ...tok.encode('\n<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n')];
    const r2 = await b.generate(request(p2, { pinAt: opening.length }));
    expect(r2.stats.promptReused).toBe(p1.length + r1.ids.length);
    expect(r2.stats.promptComputed).toBe(p2.length - p1.length - r1.ids.length);
    // A compaction rewrites the middle: only the pinned opening is reused.
    const p3 = [...opening, ...tok.encode('<|im_start|>user\n[earlier: wrote a]<|im_end|>\n<|im_start|>assistant\n')];
    const r3 = await b.generate(request(p3, { pinAt: opening.length }));
    expect(r3.stats).toMatchObject({ promptReused: opening.length, promptComputed: p3.length - opening.length });
    // A different opening (and no pin): nothing is reused.
    const p4 = tok.encode('<|im_start|>system\nother<|im_end|>\n');
    const r4 = await b.generate(request(p4));
    expect(r4.stats).toMatchObject({ promptReused: 0, promptComputed: p4.length });
  });

  it('the same prompt again reuses all of it from its answer checkpoint and begins the next reply', async () => {
    const b = backend(['a', 'b']);
    const p = tok.encode('<|im_start|>user\nq<|im_end|>\n');
    await b.generate(request(p, { maxNewTokens: 1 })); // cut after one token: the cache holds just p
    const r = await b.generate(request(p));
    expect(r.stats).toMatchObject({ promptReused: p.length, promptComputed: 0 });
    expect(r.text).toBe('b');
  });

  it('finishes with cap, context, stopped and error', async () => {
    const text = 'one two three four five six seven eight';
    const n = tok.encode(text).length;
    const b = backend([text, text, text]);
    const capped = await b.generate(request([1, 2, 3], { maxNewTokens: 4 }));
    expect(capped).toMatchObject({ finish: 'cap', ids: tok.encode(text).slice(0, 4) });
    const ctx = await backend([text], 8).generate(request([1, 2, 3]));
    expect(ctx.finish).toBe('context');
    expect(ctx.ids).toHaveLength(5);
    expect(n).toBeGreaterThan(5);
    const full = await backend([text], 8).generate(request([1, 2, 3, 4, 5, 6, 7, 8]));
    expect(full).toMatchObject({ finish: 'context', ids: [] });

    const ac = new AbortController();
    const stopped = await b.generate(request([1], { signal: ac.signal, onText: (soFar) => { if (soFar.includes('two')) ac.abort(); } }));
    expect(stopped.finish).toBe('stopped');
    expect(stopped.text).toBe('one two');
    await b.generate(request([1]));
    const none = await b.generate(request([1]));
    expect(none.finish).toBe('error');
    expect(none.error).toBeInstanceOf(ReplayScriptError);
    expect(none.error?.message).toMatch(/replay script exhausted: all 3 replies were used/);
    expect(b.results.map((r) => r.finish)).toEqual(['cap', 'stopped', 'stop-token', 'error']);
  });

  it('restart() begins the script again from its first reply, also after a reply was cut short', async () => {
    const { backend: raw, engine } = replayBackend({ tokenizer: tok, template, replies: ['one two three', 'four'], contextSize: 8192 });
    const b = new RecordingBackend(raw);
    const ac = new AbortController();
    const cut = await b.generate(request([1], { signal: ac.signal, onText: (soFar) => { if (soFar.includes('two')) ac.abort(); } }));
    expect(cut.finish).toBe('stopped');
    expect(engine.repliesLeft).toBe(1);
    engine.restart();
    expect(engine.repliesLeft).toBe(2);
    expect((await b.generate(request([1]))).text).toBe('one two three');
    expect((await b.generate(request([1]))).text).toBe('four');
    expect((await b.generate(request([1]))).finish).toBe('error');   // without a restart the script runs out
    engine.restart();
    expect((await b.generate(request([1]))).text).toBe('one two three');
  });

  it('takes the best allowed token when the constraint forbids the wanted one, and re-aligns', async () => {
    const want = tok.encode('Hello world');
    const b = backend(['Hello world']);
    const r = await b.generate(request([1], { constraint: forbidOnce(0, want[0]!, tok.vocabSize) }));
    expect(r.text).toBe('Hello world');
    expect(r.ids[0]).not.toBe(want[0]);
    expect('Hello'.startsWith(tok.decode([r.ids[0]]))).toBe(true);
    expect(tok.decode([r.ids[0]]).length).toBeGreaterThan(1); // the longest allowed prefix, not one letter
  });

  it('leaves out a scripted added token the constraint bans and goes on with the script (no degenerate filler)', async () => {
    const banned = tok.special.toolCall!;
    const ban: Constraint = () => {
      const bits = new Uint32Array(Math.ceil(tok.vocabSize / 32)).fill(0xffffffff);
      bits[banned >>> 5]! &= ~(1 << (banned & 31));
      return { bits };
    };
    const b = backend(['Done. <tool_call>\n{"name": "x"}']);
    const r = await b.generate(request([1], { constraint: ban, maxNewTokens: 64 }));
    expect(r).toMatchObject({ finish: 'stop-token', text: 'Done. \n{"name": "x"}' });
    expect(r.ids).not.toContain(banned);
  });

  it('asks the constraint before every token, the stop token included, with the tokens so far', async () => {
    const b = backend(['ab cd']);
    const asked: number[][] = [];
    await b.generate(request([1], { constraint: (soFar) => { asked.push([...soFar]); return null; } }));
    const ids = tok.encode('ab cd');
    expect(asked).toEqual([[], ...ids.map((_, i) => ids.slice(0, i + 1))]);
  });

  it('reads the CLI JSONL script and names bad lines', () => {
    expect(parseReplayJsonl('{"text": "a"}\n\n{"text": "b\\nc"}\n')).toEqual(['a', 'b\nc']);
    expect(() => parseReplayJsonl('{"text": "a"}\n{"txt": 1}', 'run.jsonl')).toThrow(ReplayScriptError);
    expect(() => parseReplayJsonl('{"text": "a"}\n{"txt": 1}', 'run.jsonl')).toThrow(/^run\.jsonl:2: expected \{"text": "\.\.\."\}/);
    expect(() => parseReplayJsonl('nope', 'run.jsonl')).toThrow(/^run\.jsonl:1: not JSON/);
    const { engine } = replayBackend({ tokenizer: tok, template, replies: parseReplayJsonl('{"text": "x"}') });
    expect(engine.repliesLeft).toBe(1);
  });
});
