// Grammar-constrained tool calls for one model and one set of tools, as the model layer's per-token
// Constraint. Outside a call the model samples freely (null). Once it emits the <tool_call> token, every
// token must keep the call valid in the model's format (xml-grammar.ts / json-grammar.ts) until
// </tool_call>; then it is free again, and a second call in the same reply is held the same way. The
// masks (bitsets over the vocabulary) come from the lazily built automaton and are cached per state.
import type { TokenConstraint } from '../../model/engine-types.ts';
import type { Constraint } from '../../model/generate-types.ts';
import type { Tokenizer } from '../../model/tokenizer.ts';
import type { ToolFormat } from '../../model/tool-format.ts';
import type { ToolSchema } from '../../model/chat-types.ts';
import { LazyDfa } from './dfa.ts';
import { jsonGrammar } from './json-grammar.ts';
import { vocabIndexFor, type VocabIndex } from './vocab-trie.ts';
import { xmlGrammar } from './xml-grammar.ts';
import { ForcedTokenWatch } from './forced-tokens.ts';

export interface ToolCallGrammarOptions {
  tokenizer: Tokenizer;
  format: ToolFormat;
  tools: readonly ToolSchema[];
}

/** One per (model, tools): holds the vocabulary trie and the cached masks, shared by every request. */
export class ToolCallGrammar {
  readonly format: ToolFormat;
  readonly vocab: VocabIndex;
  readonly dfa: LazyDfa<unknown>;
  private readonly tokenizer: Tokenizer;
  private readonly openId: number | undefined;

  constructor(opts: ToolCallGrammarOptions) {
    this.tokenizer = opts.tokenizer;
    this.format = opts.format;
    this.vocab = vocabIndexFor(opts.tokenizer);
    this.openId = opts.tools.length > 0 ? opts.tokenizer.special.toolCall : undefined;
    const close = opts.tokenizer.special.toolCallEnd === undefined ? 'text' : 'symbol';
    const spec = opts.format === 'xml' ? xmlGrammar(opts.tools, close) : jsonGrammar(opts.tools, close);
    this.dfa = new LazyDfa(spec as never, this.vocab);
  }

  /**
   * A fresh Constraint for one answer (pass it as GenerateOptions.constraint): it follows the answer
   * through the grammar, told each new token in order, and gives the next token's mask.
   */
  constraint(): Constraint & { garbage(): string | null } {
    const cursor = this.cursor();
    let told = 0;
    const catchUp = (generatedSoFar: readonly number[]) => { while (told < generatedSoFar.length) cursor.accept(generatedSoFar[told++]!); };
    const constraint: Constraint = (generatedSoFar) => {
      catchUp(generatedSoFar);
      return cursor.next();
    };
    // Speculative decoding asks for the masks after drafted tokens: a copy of the cursor walks them.
    constraint.lookahead = (generatedSoFar, draft) => {
      catchUp(generatedSoFar);
      const ahead = cursor.clone();
      return draft.map((id) => { ahead.accept(id); return ahead.next(); });
    };
    return Object.assign(constraint, { garbage: () => cursor.garbage });
  }

  private noCallBits: Uint32Array | undefined;

  /** A Constraint allowing every token but <tool_call>, for an answer that must not call a tool. */
  noCalls(): Constraint {
    if (!this.noCallBits) {
      const bits = new Uint32Array(this.vocab.words).fill(0xffffffff);
      const spare = bits.length * 32 - this.vocab.vocabSize;     // ids past the vocabulary stay off
      if (spare > 0) bits[bits.length - 1] = 0xffffffff >>> spare;
      if (this.openId !== undefined) bits[this.openId >>> 5]! &= ~(1 << (this.openId & 31));
      this.noCallBits = bits;
    }
    const bits = this.noCallBits;
    const constraint: Constraint = () => ({ bits });
    constraint.lookahead = (_soFar, draft) => draft.map(() => ({ bits }));
    return constraint;
  }

  /** Where a reply stands in the grammar after `generatedSoFar`. */
  cursor(generatedSoFar: readonly number[] = []): ToolCallCursor {
    const cursor = new ToolCallCursor(this.dfa, this.tokenizer, this.openId, this.format === 'json');
    for (const id of generatedSoFar) cursor.accept(id);
    return cursor;
  }
}

/** A reply's position in the call grammar: accept(id) moves it, next() gives the next token's constraint. */
export class ToolCallCursor {
  private state = -1;            // DFA state inside a call; -1 = outside
  /** A token the grammar did not allow was accepted (the sampler ignored the mask): constraints stop. */
  broken = false;
  /** Calls closed so far in this reply. */
  callsClosed = 0;
  /** Counts the tokens the grammar overruled; once tripped, the answer is made to end (forced-tokens.ts). */
  readonly forced = new ForcedTokenWatch();
  private overruledNext = false;
  private stopOnly: Uint32Array | null = null;

  constructor(
    private readonly dfa: LazyDfa<unknown>,
    private readonly tokenizer: Tokenizer,
    private readonly openId: number | undefined,
    private readonly greedy: boolean,
  ) {}

  /** An independent copy at the same place (speculative decoding walks drafted tokens on it). */
  clone(): ToolCallCursor {
    const c = new ToolCallCursor(this.dfa, this.tokenizer, this.openId, this.greedy);
    c.state = this.state;
    c.broken = this.broken;
    c.callsClosed = this.callsClosed;
    c.forced.copyFrom(this.forced);
    c.overruledNext = this.overruledNext;
    c.stopOnly = this.stopOnly;
    return c;
  }

  get inCall(): boolean {
    return this.state >= 0;
  }

  /** Why the answer was stopped as garbage (too many tokens forced by the call format), or null. */
  get garbage(): string | null {
    return this.forced.tripped;
  }

  next(): TokenConstraint | null {
    if (this.forced.tripped) return { bits: this.stopOnlyBits(), greedy: true };
    if (this.state < 0) return null;
    const bits = this.dfa.mask(this.state);
    return this.greedy ? { bits, greedy: true, overruled: this.onOverruled } : { bits, overruled: this.onOverruled };
  }

  /** The sampler's report (TokenConstraint.overruled): the next token accepted was not the model's own top choice. */
  readonly onOverruled = (): void => {
    this.overruledNext = true;
  };

  accept(tokenId: number): void {
    const overruled = this.overruledNext;
    this.overruledNext = false;
    if (this.broken || this.forced.tripped) return;
    if (this.state >= 0) this.forced.record(overruled);
    if (this.state < 0) {
      if (tokenId === this.openId) this.state = this.dfa.start;
      return;
    }
    const next = this.dfa.stepToken(this.state, tokenId, this.tokenizer.tokenBytes(tokenId));
    if (next < 0) {
      this.broken = true;
      this.state = -1;
    } else if (this.dfa.isDone(next)) {
      this.state = -1;
      this.callsClosed++;
      this.forced.endCall();
    } else {
      this.state = next;
    }
  }

  /** Only the end-of-turn token: a tripped answer ends at once. */
  private stopOnlyBits(): Uint32Array {
    if (!this.stopOnly) {
      const id = this.tokenizer.special.imEnd;
      this.stopOnly = new Uint32Array((id >>> 5) + 1);
      this.stopOnly[id >>> 5] = 1 << (id & 31);
    }
    return this.stopOnly;
  }
}
