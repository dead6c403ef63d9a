// A replay script: one scripted reply per line ({"text": "..."}), and the cursor that samples a reply
// token by token through the real tokenizer under the caller's grammar. When the grammar forbids the
// token the script wants, the cursor takes what a model pushed off its path would (the longest allowed
// prefix of what the script says next) and re-aligns, so a scripted invalid call comes out corrected
// exactly as a constrained model's would. The model around it is replay-engine.ts.
import type { TokenConstraint } from '../../model/engine-types.ts';
import type { Tokenizer } from '../../model/tokenizer.ts';

/** How far ahead in the script a forced token may be matched (bytes skipped). */
const SKIP_AHEAD_BYTES = 24;

/** A replay script line is not {"text": "..."}. Names the file and line. */
export class ReplayScriptError extends Error {
  override name = 'ReplayScriptError';
  readonly code = 'replay-script';
}

/** One scripted reply per non-empty line: {"text": "..."}. */
export function parseReplayJsonl(jsonl: string, where = 'replay script'): string[] {
  const replies: string[] = [];
  jsonl.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new ReplayScriptError(`${where}:${i + 1}: not JSON (${(e as Error).message})`);
    }
    const text = (value as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') throw new ReplayScriptError(`${where}:${i + 1}: expected {"text": "..."}`);
    replies.push(text);
  });
  return replies;
}

/** One reply being sampled: the remaining scripted bytes and the tokens the tokenizer makes of them. */
export class ScriptCursor {
  private rest: Uint8Array;
  private pending: number[];

  /** `endToken` is wanted once the script is used up (<|im_end|>). */
  constructor(text: string, private readonly tokenizer: Tokenizer, private readonly endToken: number) {
    this.rest = new TextEncoder().encode(text);
    this.pending = this.tokenize(this.rest);
  }

  /** The next token of this reply under `constraint`, advancing the script; null when nothing is allowed. */
  pick(constraint: TokenConstraint | null | undefined): number | null {
    if (constraint?.bits) this.leaveOutBannedSymbols(constraint);
    const wanted = this.pending[0] ?? this.endToken;
    // The script's next token is the model's own top choice: say so when the grammar does not allow it.
    if (constraint?.bits && !isAllowed(constraint.bits, wanted)) constraint.overruled?.();
    const chosen = this.choose(wanted, constraint?.bits);
    if (chosen === wanted) this.consumeWanted();
    else if (chosen !== null && !this.tokenizer.addedTokens.has(wanted)) this.consumeSubstitute(this.tokenizer.tokenBytes(chosen));
    return chosen;
  }

  /**
   * A scripted added token the grammar forbids (`<tool_call>` in the closing answer, sampled without
   * calls) is one symbol with no other spelling: a model told it may not write it leaves it out and goes
   * on, so the cursor drops it when what the script says after it (or its end) is allowed. Otherwise
   * (`</tool_call>` before the call may close) it stays wanted and choose() steers towards it.
   */
  private leaveOutBannedSymbols(constraint: TokenConstraint): void {
    const bits = constraint.bits!;
    for (;;) {
      const wanted = this.pending[0];
      if (wanted === undefined || !this.tokenizer.addedTokens.has(wanted) || isAllowed(bits, wanted)) return;
      if (!isAllowed(bits, this.pending[1] ?? this.endToken)) return;
      constraint.overruled?.();
      this.consumeWanted();
    }
  }

  /**
   * The wanted token when allowed. Else, like a model pushed off its path: the allowed token that is the
   * longest prefix of the script's remaining bytes; else one that matches a little further on inside the
   * same name (the script skips ahead to it, e.g. `file_path` -> `path`); else the lowest allowed id.
   */
  private choose(wanted: number, bits: Uint32Array | undefined): number | null {
    if (!bits || isAllowed(bits, wanted)) return wanted;
    const rest = this.rest;
    const vocab = this.tokenizer.vocabSize;
    const allowed: number[] = [];
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w];
      while (word !== 0) {
        const bit = 31 - Math.clz32(word & -word);
        word &= word - 1;
        const id = w * 32 + bit;
        if (id < vocab && !this.tokenizer.addedTokens.has(id)) allowed.push(id);
      }
    }
    // A wanted added token (</tool_call>, <|im_end|>) is one symbol: its text is not there to be spelt.
    const spell = !this.tokenizer.addedTokens.has(wanted);
    for (let skip = 0; spell && skip <= SKIP_AHEAD_BYTES && skip < rest.length; skip++) {
      if (skip > 0 && !isWordByte(rest[skip - 1])) break;  // skip ahead only within a misspelt name
      const minLength = skip === 0 ? 1 : 2;
      let best = -1;
      let bestLength = 0;
      for (const id of allowed) {
        const b = this.tokenizer.tokenBytes(id);
        if (b.length >= minLength && skip + b.length <= rest.length && b.length > bestLength && isPrefixAt(b, rest, skip)) {
          best = id;
          bestLength = b.length;
        }
      }
      if (best >= 0) {
        this.skip(skip);
        return best;
      }
    }
    if (allowed.length > 0) return allowed[0];
    return firstSet(bits);
  }

  /** Drop bytes the model skipped over. */
  private skip(n: number): void {
    if (n === 0) return;
    this.rest = this.rest.subarray(n);
    this.pending = this.tokenize(this.rest);
  }

  private consumeWanted(): void {
    const id = this.pending.shift();
    if (id !== undefined) this.rest = this.rest.subarray(this.tokenizer.tokenBytes(id).length);
  }

  /** A different token was taken: drop it from the script if the script starts with it, then re-tokenize. */
  private consumeSubstitute(taken: Uint8Array): void {
    if (taken.length <= this.rest.length && isPrefix(taken, this.rest)) {
      this.rest = this.rest.subarray(taken.length);
      this.pending = this.tokenize(this.rest);
    }
  }

  /** Bytes -> ids; a leading partial UTF-8 character (after a split) becomes single-byte tokens. */
  private tokenize(bytes: Uint8Array): number[] {
    let k = 0;
    while (k < bytes.length && k < 3 && (bytes[k] & 0xc0) === 0x80) k++;
    const head = Array.from(bytes.subarray(0, k), (b) => singleByteTokens(this.tokenizer)[b]!);
    return [...head, ...this.tokenizer.encode(new TextDecoder().decode(bytes.subarray(k)))];
  }
}

function isAllowed(bits: Uint32Array, id: number): boolean {
  return ((bits[id >>> 5] >>> (id & 31)) & 1) === 1;
}

function isPrefix(a: Uint8Array, b: Uint8Array): boolean {
  return isPrefixAt(a, b, 0);
}

function isPrefixAt(a: Uint8Array, b: Uint8Array, at: number): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[at + i]) return false;
  return true;
}

/** Letters, digits, '_' and '-': the bytes of a tool or parameter name. */
function isWordByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b === 0x2d;
}

function firstSet(bits: Uint32Array): number | null {
  for (let w = 0; w < bits.length; w++) if (bits[w] !== 0) return w * 32 + 31 - Math.clz32(bits[w] & -bits[w]);
  return null;
}

/** For each byte, a token that is exactly that byte (not an added token), or -1. Built once per tokenizer. */
const byteTokenTables = new WeakMap<Tokenizer, Int32Array>();
function singleByteTokens(tokenizer: Tokenizer): Int32Array {
  let table = byteTokenTables.get(tokenizer);
  if (table) return table;
  table = new Int32Array(256).fill(-1);
  const { bytes, offsets } = tokenizer.tokenByteTable();
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    const at = offsets[id]!;
    if (offsets[id + 1]! - at === 1 && table[bytes[at]!]! < 0 && !tokenizer.addedTokens.has(id)) table[bytes[at]!] = id;
  }
  byteTokenTables.set(tokenizer, table);
  return table;
}
