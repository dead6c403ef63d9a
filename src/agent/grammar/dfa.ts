// A grammar given as a byte-level state machine (plus atomic added-token symbols), turned lazily into
// a DFA with integer states, and the token masks of its states computed by walking the vocabulary trie.
// Masks are cached per state: a call revisits the same few states (inside a value, between parameters),
// so after the first visit a mask costs one array lookup.
import { BYTE_CLASS, type VocabIndex } from './vocab-trie.ts';

/** What a grammar provides. States are plain values; `key` identifies equal states. */
export interface GrammarSpec<S> {
  start: S;
  key(s: S): string;
  /** State after one byte of token text, or null when the byte breaks the call. */
  byte(s: S, b: number): S | null;
  /** State after an added token (<tool_call>, </tool_call>, <|im_end|>, ...), or null. */
  added(s: S, content: string): S | null;
  /**
   * Class bits T (see CLASS) such that every byte whose BYTE_CLASS does not meet T leads back to s itself
   * (free text). 0 when s is not such a state. Checked when the state is first seen.
   */
  loopClasses(s: S): number;
  /** The call is complete: masks stop here. */
  done(s: S): boolean;
}

const UNKNOWN = -2;
export const DEAD = -1;

export class GrammarError extends Error {
  override name = 'GrammarError';
  readonly code = 'grammar';
}

export class LazyDfa<S> {
  readonly start: number;
  private readonly states: S[] = [];
  private readonly ids = new Map<string, number>();
  private trans = new Int32Array(0);
  private loop = new Uint16Array(0);
  private doneFlags = new Uint8Array(0);
  private readonly addedTrans: Int32Array[] = [];
  private readonly addedIndex = new Map<number, number>();   // token id -> index in vocab.added
  private readonly masks = new Map<number, Uint32Array>();   // ≈19 KB each for Qwen3: at most maxCachedMasks kept
  /** How many masks were computed (not served from the cache). */
  computedMasks = 0;

  constructor(private readonly spec: GrammarSpec<S>, private readonly vocab: VocabIndex, private readonly maxCachedMasks = 512) {
    vocab.added.forEach((a, i) => this.addedIndex.set(a.id, i));
    this.start = this.intern(spec.start);
  }

  get stateCount(): number {
    return this.states.length;
  }

  isDone(state: number): boolean {
    return this.doneFlags[state] === 1;
  }

  /** State after one byte. */
  step(state: number, b: number): number {
    const at = state * 256 + b;
    let next = this.trans[at];
    if (next === UNKNOWN) {
      const s = this.spec.byte(this.states[state], b);
      next = s === null ? DEAD : this.intern(s);
      this.trans[at] = next;
    }
    return next;
  }

  /** State after a whole token (its bytes, or the added-token symbol). */
  stepToken(state: number, tokenId: number, tokenBytes: Uint8Array): number {
    const added = this.addedIndex.get(tokenId);
    if (added !== undefined) return this.stepAdded(state, added);
    let s = state;
    for (let i = 0; i < tokenBytes.length && s >= 0; i++) s = this.step(s, tokenBytes[i]);
    return s;
  }

  /** The allowed tokens in `state` as a bitset over the vocabulary. Shared: do not modify. */
  mask(state: number): Uint32Array {
    let bits = this.masks.get(state);
    if (!bits) {
      if (this.masks.size >= this.maxCachedMasks) this.masks.clear();
      bits = this.computeMask(state);
      this.masks.set(state, bits);
      this.computedMasks++;
    }
    return bits;
  }

  private stepAdded(state: number, index: number): number {
    let row = this.addedTrans[state];
    if (!row) {
      row = new Int32Array(this.vocab.added.length).fill(UNKNOWN);
      this.addedTrans[state] = row;
    }
    if (row[index] === UNKNOWN) {
      const s = this.spec.added(this.states[state], this.vocab.added[index].content);
      row[index] = s === null ? DEAD : this.intern(s);
    }
    return row[index];
  }

  private computeMask(state: number): Uint32Array {
    const v = this.vocab;
    const bits = new Uint32Array(v.words);
    const ids = v.sortedIds;
    const setRange = (from: number, to: number) => {
      for (let p = from; p < to; p++) {
        const id = ids[p];
        bits[id >>> 5] |= 1 << (id & 31);
      }
    };
    const stateAt = new Int32Array(v.maxDepth + 1);
    stateAt[0] = state;
    let i = 0;
    while (i < v.nodeCount) {
      const d = v.depth[i];
      const s = this.step(stateAt[d - 1], v.byte[i]);
      if (s < 0) { i = v.skip[i]; continue; }
      const loop = this.loop[s];
      if (loop !== 0 && (v.below[i] & loop) === 0) {
        setRange(v.tokStart[i], v.tokEnd[i]);   // every longer token stays in this free-text state
        i = v.skip[i];
        continue;
      }
      setRange(v.tokStart[i], v.tokStart[i] + v.tokHere[i]);
      stateAt[d] = s;
      i++;
    }
    for (let k = 0; k < v.added.length; k++) {
      if (this.stepAdded(state, k) >= 0) {
        const id = v.added[k].id;
        bits[id >>> 5] |= 1 << (id & 31);
      }
    }
    return bits;
  }

  private intern(s: S): number {
    const key = this.spec.key(s);
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.states.length;
    this.states.push(s);
    this.ids.set(key, id);
    if (id * 256 + 256 > this.trans.length) this.grow();
    this.trans.fill(UNKNOWN, id * 256, id * 256 + 256);
    this.doneFlags[id] = this.spec.done(s) ? 1 : 0;
    const loop = this.spec.loopClasses(s);
    if (loop !== 0) this.checkLoop(s, key, loop);
    this.loop[id] = loop;
    return id;
  }

  /** A state that claims to be free text must map every byte outside its classes to itself. */
  private checkLoop(s: S, key: string, loop: number): void {
    for (let b = 0; b < 256; b++) {
      if ((BYTE_CLASS[b] & loop) !== 0) continue;
      const next = this.spec.byte(s, b);
      if (next === null || this.spec.key(next) !== key) {
        throw new GrammarError(`grammar state ${key} claims free text but byte ${b} leaves it`);
      }
    }
  }

  private grow(): void {
    const states = Math.max(64, (this.trans.length / 256) * 2);
    const trans = new Int32Array(states * 256);
    trans.set(this.trans);
    this.trans = trans;
    const loop = new Uint16Array(states);
    loop.set(this.loop);
    this.loop = loop;
    const done = new Uint8Array(states);
    done.set(this.doneFlags);
    this.doneFlags = done;
  }
}
