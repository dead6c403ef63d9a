// EngineBackend on the CPU ReferenceEngine with a tiny random Qwen3 (real tokenizer, real template):
// its tokens are the Generator's own, its counts exact, its checkpoint and grammar plumbing real.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { tinyModelDir } from '../../helpers/tiny-model.ts';
import { NodeFolderSource } from '../../../src/model/sources/node-folder.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { Generator } from '../../../src/model/generator.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import type { Tokenizer } from '../../../src/model/tokenizer.ts';
import type { ModelWeights } from '../../../src/model/types.ts';
import { EngineBackend } from '../../../src/agent/engine-backend.ts';
import type { TokenGenerator } from '../../../src/model/generate-types.ts';

const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/qwen3.jinja', import.meta.url), 'utf8'));
const CTX = 512;
let tokenizer: Tokenizer;
let weights: ModelWeights;

beforeAll(async () => {
  tokenizer = await loadBundledQwen3Tokenizer();
  const dir = await tinyModelDir({ layers: 2 });
  weights = await loadWeights(new NodeFolderSource(dir), { layers: [0, 2], embedding: true, head: true });
}, 120_000);

function fresh(ckpt?: number): { backend: EngineBackend; generator: Generator } {
  const generator = new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX, ...(ckpt === undefined ? {} : { ckpt }) });
  const backend = new EngineBackend({ generator, tokenizer, template, contextSize: CTX, devices: 1, sampling: { temperature: 0 } });
  return { backend, generator };
}

const stop = () => [tokenizer.special.imEnd];

describe('EngineBackend', () => {
  test('renders with the model template, thinking off, generation prompt added', () => {
    const { backend } = fresh();
    const text = backend.render([{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }], []);
    expect(text).toBe('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
    expect(backend.decode(backend.encode(text))).toBe(text);
  });

  test('tokens are exactly the Generator\'s, counts are exact and the stream ends on the same text', async () => {
    const prompt = tokenizer.encode('<|im_start|>user\nwrite a game<|im_end|>\n<|im_start|>assistant\n');
    const direct = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, { maxNewTokens: 12, stopTokens: stop() });
    const { backend } = fresh();
    const streamed: string[] = [];
    const r = await backend.generate({ prompt, maxNewTokens: 12, stopTokens: stop(), onText: (text) => streamed.push(text) });
    expect(r.ids).toEqual(direct.ids);
    expect(r.ids.length).toBe(12);
    expect(r.finish).toBe('cap');
    expect(r.text).toBe(tokenizer.decode(direct.ids));
    expect(streamed.length).toBe(12);
    expect(streamed[streamed.length - 1]).toBe(r.text);
    expect(r.stats).toMatchObject({ promptTokens: prompt.length, promptComputed: prompt.length, promptReused: 0, generated: 12 });
  });

  test('a prompt that extends the last one reuses the cache; after a rewrite only the pinned prefix is reused', async () => {
    const { backend } = fresh();
    const opening = tokenizer.encode('<|im_start|>system\nYou build static web apps.<|im_end|>\n');
    const turn = (t: string) => tokenizer.encode(`<|im_start|>user\n${t}<|im_end|>\n<|im_start|>assistant\n`);
    const first = [...opening, ...turn('one')];
    const a = await backend.generate({ prompt: first, maxNewTokens: 4, stopTokens: stop(), pinAt: opening.length });
    const second = [...first, ...a.ids, ...turn('two')];
    const b = await backend.generate({ prompt: second, maxNewTokens: 4, stopTokens: stop(), pinAt: opening.length });
    // The last sampled token was never fed back, so the cache holds the first prompt + all but one answer token.
    expect(b.stats.promptReused).toBe(first.length + a.ids.length - 1);
    expect(b.stats.promptReused + b.stats.promptComputed).toBe(second.length);
    const rewritten = [...opening, ...turn('something else entirely')];
    const c = await backend.generate({ prompt: rewritten, maxNewTokens: 4, stopTokens: stop(), pinAt: opening.length });
    expect(c.stats.promptReused).toBe(opening.length);
    expect(c.stats.promptComputed).toBe(rewritten.length - opening.length);
  });

  test('the constraint is passed through: asked before every token with the ids so far; only allowed tokens come out', async () => {
    const { backend } = fresh();
    const allowed = tokenizer.encode(' a')[0]!;
    const bits = new Uint32Array(Math.ceil(tokenizer.vocabSize / 32));
    bits[allowed >>> 5]! |= 1 << (allowed & 31);
    const asked: number[][] = [];
    const r = await backend.generate({
      prompt: tokenizer.encode('hello'), maxNewTokens: 5, stopTokens: stop(),
      constraint: (soFar) => { asked.push([...soFar]); return soFar.length >= 2 ? { bits } : null; },
    });
    expect(asked).toEqual([0, 1, 2, 3, 4].map((n) => r.ids.slice(0, n)));
    expect(r.ids.slice(2)).toEqual([allowed, allowed, allowed]);
  });

  test("the room's note (which device left) comes through in its own field, not as an error", async () => {
    const { generator } = fresh();
    const room: TokenGenerator = {
      generate: async (prompt, o) => ({ ...(await generator.generate(prompt, o)), finish: 'stopped', note: 'device "Phone" left the room (tab closed)' }),
    };
    const backend = new EngineBackend({ generator: room, tokenizer, template, contextSize: CTX });
    const r = await backend.generate({ prompt: tokenizer.encode('hello'), maxNewTokens: 3, stopTokens: stop() });
    expect(r).toMatchObject({ finish: 'stopped', note: 'device "Phone" left the room (tab closed)' });
    expect(r.error).toBeUndefined();
    expect(r.text).toBe(tokenizer.decode(r.ids));
  });

  test('an aborted request ends stopped; counts still exact', async () => {
    const { backend } = fresh();
    const controller = new AbortController();
    const prompt = tokenizer.encode('count to ten');
    const r = await backend.generate({
      prompt, maxNewTokens: 50, stopTokens: stop(), signal: controller.signal,
      onToken: () => { if (!controller.signal.aborted) controller.abort(); },
    });
    expect(r.finish).toBe('stopped');
    expect(r.ids.length).toBe(1);
    expect(r.stats.generated).toBe(1);
  });

  test('a full context ends with reason context, and errors keep their message', async () => {
    const { backend } = fresh();
    const long = new Array(CTX).fill(tokenizer.encode('a')[0]!);
    const r = await backend.generate({ prompt: long, maxNewTokens: 4, stopTokens: stop() });
    expect(r.finish).toBe('context');
    const bad = await backend.generate({ prompt: [], maxNewTokens: 4, stopTokens: stop() });
    expect(bad.finish).toBe('error');
    expect(bad.error?.message).toMatch(/prompt is empty/);
  });

  test('devices may be asked each time (a room changes size)', () => {
    let n = 1;
    const backend = new EngineBackend({ generator: fresh().generator, tokenizer, template, contextSize: CTX, devices: () => n });
    expect(backend.devices).toBe(1);
    n = 3;
    expect(backend.devices).toBe(3);
    expect(() => new EngineBackend({ generator: fresh().generator, tokenizer, template, contextSize: 0 })).toThrow(/contextSize 0/);
  });
});

describe('EngineBackend in a room that re-deals its context', () => {
  test('the context (and so the agent\'s budget, read at each request) follows the room\'s; a bad one is refused by name', () => {
    let ctx = 4096;
    const generator = new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX });
    const backend = new EngineBackend({ generator, tokenizer, template, contextSize: () => ctx, devices: 1 });
    expect(backend.contextSize).toBe(4096);
    ctx = 24_576;
    expect(backend.contextSize).toBe(24_576);
    ctx = 0;
    expect(() => backend.contextSize).toThrowError(/contextSize 0 must be a positive integer/);
    expect(() => new EngineBackend({ generator, tokenizer, template, contextSize: 1.5 })).toThrowError(/contextSize 1.5/);
  });
});
