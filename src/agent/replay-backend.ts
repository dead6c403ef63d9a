// A scripted model for tests and the headless CLI. Each generate() takes the next scripted reply (text)
// and samples it token by token through the real tokenizer, with the caller's grammar mask applied for
// real: when the mask forbids the token the script wants, the best allowed token is taken instead and the
// script re-aligns — so a scripted invalid call comes out corrected exactly as a constrained model's would.
// Usage counts follow the engine's KV rules: a prompt reuses the live cache when the cache is a prefix
// of it, else the pinned checkpoint (end of system prompt + tools) when that still matches, else nothing.
import type { TokenConstraint } from '../model/engine-types.ts';
import type { ChatTemplate } from '../model/chat-template.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { Backend, ChatMessage, FinishReason, GenerateRequest, GenerateResult, TokenMaskSource } from './backend.ts';
import type { ToolSchema } from './tool-types.ts';

/** How far ahead in the script a forced token may be matched (bytes skipped). */
const SKIP_AHEAD_BYTES = 24;

export interface ReplayOptions {
  tokenizer: Tokenizer;
  template: ChatTemplate;
  replies: string[];
  contextSize?: number;          // default 8192
  name?: string;                 // default "replay"
  devices?: number;              // default 1
  /** Wait this long per token (lets UI tests watch a reply stream in). Default 0. */
  tokenDelayMs?: number;
}

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

export class ReplayBackend implements Backend {
  readonly name: string;
  readonly contextSize: number;
  readonly devices: number;
  /** Every request received, in order (for tests of the loop). */
  readonly requests: GenerateRequest[] = [];
  /** Every result returned, in order. */
  readonly results: GenerateResult[] = [];

  private readonly tokenizer: Tokenizer;
  private readonly template: ChatTemplate;
  private readonly replies: string[];
  private readonly tokenDelayMs: number;
  private nextReply = 0;
  private live: number[] = [];                 // tokens whose K/V the "engine" holds
  private pinned: number[] | null = null;      // tokens of the pinned checkpoint
  private singleByteToken: Int32Array | null = null;

  constructor(opts: ReplayOptions) {
    this.tokenizer = opts.tokenizer;
    this.template = opts.template;
    this.replies = [...opts.replies];
    this.contextSize = opts.contextSize ?? 8192;
    this.name = opts.name ?? 'replay';
    this.devices = opts.devices ?? 1;
    this.tokenDelayMs = opts.tokenDelayMs ?? 0;
  }

  /** From the CLI's JSONL script (one {"text": "..."} per line). */
  static fromJsonl(jsonl: string, opts: Omit<ReplayOptions, 'replies'>, where?: string): ReplayBackend {
    return new ReplayBackend({ ...opts, replies: parseReplayJsonl(jsonl, where) });
  }

  /** Scripted replies not yet used. */
  get repliesLeft(): number {
    return this.replies.length - this.nextReply;
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  decode(ids: number[]): string {
    return this.tokenizer.decode(ids);
  }

  render(messages: ChatMessage[], tools: ToolSchema[]): string {
    return this.template.render(messages, tools, { enableThinking: false, addGenerationPrompt: true });
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    this.requests.push(req);
    const { prompt } = req;
    const tokens: number[] = [];
    const finish = (reason: FinishReason, fed: number[], computed: number, reused: number, error?: string): GenerateResult => {
      this.live = [...prompt, ...fed];
      const result: GenerateResult = {
        tokens, text: this.tokenizer.decode(tokens), finish: reason,
        usage: { promptTokens: prompt.length, promptComputed: computed, promptReused: reused, generated: tokens.length },
        seconds: (performance.now() - started) / 1000,
      };
      if (error !== undefined) result.error = error;
      this.results.push(result);
      return result;
    };

    if (req.signal?.aborted) return this.finishUnrun('stopped', started, prompt.length);
    if (prompt.length >= this.contextSize) return this.finishUnrun('context', started, prompt.length);
    const reused = this.reusablePrefix(prompt, req.pinAt);
    if (req.pinAt !== undefined && req.pinAt <= prompt.length) this.pinned = prompt.slice(0, req.pinAt);
    const computed = prompt.length - reused;

    if (this.nextReply >= this.replies.length) {
      return finish('error', [], computed, reused, `replay script exhausted: all ${this.replies.length} replies were used`);
    }
    const script = new ScriptCursor(new TextEncoder().encode(this.replies[this.nextReply++]), this.tokenizer, this.byteTokens());
    const endToken = req.stopTokens[0] ?? this.tokenizer.special.imEnd;
    let source: TokenMaskSource | null = req.mask ? req.mask([]) : null;
    const stream = new TextDecoder('utf-8', { fatal: false }); // text so far without re-decoding every token
    let streamed = '';

    for (;;) {
      if (req.signal?.aborted) return finish('stopped', tokens.slice(0, -1), computed, reused);
      if (tokens.length >= req.maxNewTokens) return finish('cap', tokens.slice(0, -1), computed, reused);
      if (prompt.length + tokens.length >= this.contextSize) return finish('context', tokens.slice(0, -1), computed, reused);
      if (!source && req.mask && tokens.length > 0) source = req.mask([...tokens]);
      const constraint = source?.next() ?? null;
      const wanted = script.wanted() ?? endToken;
      const chosen = this.choose(wanted, constraint, script);
      if (chosen === null) return finish('error', tokens.slice(0, -1), computed, reused, 'the grammar allows no token at this point');
      source?.accept(chosen);
      if (chosen === wanted) script.consumeWanted();
      else if (!this.tokenizer.addedTokens.has(wanted)) script.consumeSubstitute(this.tokenizer.tokenBytes(chosen));
      if (req.stopTokens.includes(chosen)) return finish('stop', tokens, computed, reused);
      tokens.push(chosen);
      if (req.onToken) {
        streamed += stream.decode(this.tokenizer.tokenBytes(chosen), { stream: true });
        req.onToken(chosen, streamed);
      }
      if (this.tokenDelayMs > 0) await sleep(this.tokenDelayMs);
      else if (tokens.length % 32 === 0) await sleep(0); // let timers (Stop buttons, aborts) run
    }
  }

  /** Tokens of the prompt the engine would serve from its caches (the rest is computed). */
  private reusablePrefix(prompt: number[], pinAt: number | undefined): number {
    const lcp = commonPrefix(this.live, prompt);
    let reused = 0;
    if (lcp === this.live.length) reused = lcp;
    else if (pinAt !== undefined && this.pinned && this.pinned.length === pinAt && lcp >= pinAt) reused = pinAt;
    return Math.max(0, Math.min(reused, prompt.length - 1)); // the last prompt token always runs (its logits)
  }

  private finishUnrun(reason: FinishReason, started: number, promptTokens: number): GenerateResult {
    const result: GenerateResult = {
      tokens: [], text: '', finish: reason,
      usage: { promptTokens, promptComputed: 0, promptReused: 0, generated: 0 },
      seconds: (performance.now() - started) / 1000,
    };
    this.results.push(result);
    return result;
  }

  /**
   * The wanted token when allowed. Else, like a model pushed off its path: the allowed token that is the
   * longest prefix of the script's remaining bytes; else one that matches a little further on inside the
   * same name (the script skips ahead to it, e.g. `file_path` -> `path`); else the lowest allowed id.
   */
  private choose(wanted: number, constraint: TokenConstraint | null, script: ScriptCursor): number | null {
    const bits = constraint?.bits;
    if (!bits || isAllowed(bits, wanted)) return wanted;
    const rest = script.remainingBytes();
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
        script.skip(skip);
        return best;
      }
    }
    if (allowed.length > 0) return allowed[0];
    return firstSet(bits);
  }

  private byteTokens(): Int32Array {
    if (this.singleByteToken) return this.singleByteToken;
    const table = new Int32Array(256).fill(-1);
    const { bytes, offsets } = this.tokenizer.tokenByteTable();
    for (let id = 0; id < this.tokenizer.vocabSize; id++) {
      const at = offsets[id];
      if (offsets[id + 1] - at === 1 && table[bytes[at]] < 0 && !this.tokenizer.addedTokens.has(id)) table[bytes[at]] = id;
    }
    this.singleByteToken = table;
    return table;
  }
}

/** The remaining scripted bytes and the tokens the tokenizer makes of them. */
class ScriptCursor {
  private rest: Uint8Array;
  private pending: number[];

  constructor(bytes: Uint8Array, private readonly tokenizer: Tokenizer, private readonly byteToken: Int32Array) {
    this.rest = bytes;
    this.pending = this.tokenize(bytes);
  }

  wanted(): number | undefined {
    return this.pending[0];
  }

  remainingBytes(): Uint8Array {
    return this.rest;
  }

  /** Drop bytes the model skipped over. */
  skip(n: number): void {
    if (n === 0) return;
    this.rest = this.rest.subarray(n);
    this.pending = this.tokenize(this.rest);
  }

  consumeWanted(): void {
    const id = this.pending.shift();
    if (id !== undefined) this.rest = this.rest.subarray(this.tokenizer.tokenBytes(id).length);
  }

  /** A different token was taken: drop it from the script if the script starts with it, then re-tokenize. */
  consumeSubstitute(taken: Uint8Array): void {
    if (taken.length <= this.rest.length && isPrefix(taken, this.rest)) {
      this.rest = this.rest.subarray(taken.length);
      this.pending = this.tokenize(this.rest);
    }
  }

  /** Bytes -> ids; a leading partial UTF-8 character (after a split) becomes single-byte tokens. */
  private tokenize(bytes: Uint8Array): number[] {
    let k = 0;
    while (k < bytes.length && k < 3 && (bytes[k] & 0xc0) === 0x80) k++;
    const head = Array.from(bytes.subarray(0, k), (b) => this.byteToken[b]);
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

function commonPrefix(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
