// Garbage detection on the grammar side: tokens the call format overruled (the model's own top choice
// was not allowed) are counted inside calls; 64 in a row, or most of a call past 32 tokens, trips it,
// and the mask then lets only <|im_end|> through so the answer ends at once.
import { beforeAll, describe, expect, it } from 'vitest';
import { ForcedTokenWatch, garbageNote } from '../../../../src/agent/grammar/forced-tokens.ts';
import { ToolCallGrammar } from '../../../../src/agent/grammar/tool-call-mask.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../../src/agent/tools/schemas.ts';
import { loadBundledQwen3Tokenizer } from '../../../../src/model/bundled-tokenizer.ts';
import type { Tokenizer } from '../../../../src/model/tokenizer.ts';
import { FORCED_MIN_CALL_TOKENS, FORCED_RUN_STOP } from '../../../../src/agent/limits.ts';

let tok: Tokenizer;
beforeAll(async () => { tok = await loadBundledQwen3Tokenizer(); }, 60_000);

describe('ForcedTokenWatch', () => {
  it('trips after 64 overruled tokens in a row, not after 63 and a free choice', () => {
    const w = new ForcedTokenWatch();
    // In a long value: one overruled token now and then is a working model.
    for (let i = 0; i < 500; i++) w.record(i % 10 === 0);
    expect(w.tripped).toBeNull();
    w.endCall();
    // A long call (so the share rule stays quiet): 63 overruled in a row, then a free choice, is fine …
    for (let i = 0; i < 200; i++) w.record(false);
    for (let i = 0; i < FORCED_RUN_STOP - 1; i++) w.record(true);
    w.record(false);
    expect(w.tripped).toBeNull();
    // … 64 in a row is not.
    for (let i = 0; i < FORCED_RUN_STOP; i++) w.record(true);
    expect(w.tripped).toBe("the call format overruled the model's own choice 64 tokens in a row");
  });

  it('trips when most of a call was overruled, once the call has 32 tokens', () => {
    const w = new ForcedTokenWatch();
    for (let i = 0; i < FORCED_MIN_CALL_TOKENS - 1; i++) w.record(i % 3 !== 0); // 2 in 3 overruled, not long enough yet
    expect(w.tripped).toBeNull();
    w.record(true);
    expect(w.tripped).toMatch(/^the call format overruled the model's own choice on 2\d of the call's 32 tokens$/);
    expect(garbageNote(w.tripped!)).toMatch(/too many tokens were forced by the call format .*: the room's engine is producing garbage\. Try again, or reload the model$/);
  });
});

describe('the call grammar counts what it overrules', () => {
  it('only inside calls; its masks carry the report; once tripped only <|im_end|> is allowed, greedily', () => {
    const grammar = new ToolCallGrammar({ tokenizer: tok, format: 'json', tools: BUILTIN_TOOL_SCHEMAS });
    const src = grammar.cursor();
    // Outside a call the grammar asks nothing, so nothing is counted.
    for (const id of tok.encode('Let me look. ')) { src.onOverruled(); src.accept(id); }
    expect(src.garbage).toBeNull();
    src.accept(tok.special.toolCall!);
    expect(src.next()!.overruled).toBe(src.onOverruled); // what the engine calls
    const text = tok.encode('\n{"name": "write_file", "arguments": {"path": "a.js", "content": "' + 'zq '.repeat(80));
    for (const id of text) {
      if (src.garbage) break;
      src.onOverruled();
      src.accept(id);
    }
    expect(src.garbage).toMatch(/overruled the model's own choice/);
    const c = src.next()!;
    expect(c.greedy).toBe(true);
    const allowedIds = [...c.bits!.keys()].flatMap((w) => Array.from({ length: 32 }, (_, b) => w * 32 + b)).filter((id) => ((c.bits![id >>> 5]! >>> (id & 31)) & 1) === 1);
    expect(allowedIds).toEqual([tok.special.imEnd]);
  });
});
