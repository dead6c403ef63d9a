// A byte trie of the whole vocabulary, flattened into typed arrays in preorder, for grammar masks.
// Tokens are sorted by their bytes, so every trie node's subtree is one contiguous run of the sorted
// token list, and a walk can skip or accept a whole subtree in O(1) nodes. Each node also records which
// "byte classes" occur below it, so a grammar state that loops on every byte outside some classes
// (free text) can accept whole subtrees that contain none of them without walking them.
// Added tokens (<tool_call>, <|im_end|>, ...) are not in the trie: grammars treat them as symbols.
import type { TokenByteTable, Tokenizer } from '../../model/tokenizer.ts';

/** Byte classes (bit per class). Bytes in no class are plain text for every grammar here. */
export const CLASS = {
  newline: 1 << 0,     // \n
  quote: 1 << 1,       // "
  backslash: 1 << 2,   // \
  braceOpen: 1 << 3,   // {
  braceClose: 1 << 4,  // }
  bracketOpen: 1 << 5, // [
  bracketClose: 1 << 6,// ]
  lt: 1 << 7,          // <
  gt: 1 << 8,          // >
  control: 1 << 9,     // 0x00–0x1f except \n, and 0x7f
  slash: 1 << 10,      // /
} as const;

export const BYTE_CLASS: Uint16Array = (() => {
  const c = new Uint16Array(256);
  for (let b = 0; b < 0x20; b++) c[b] = CLASS.control;
  c[0x7f] = CLASS.control;
  c[0x0a] = CLASS.newline;
  c[0x22] = CLASS.quote;
  c[0x5c] = CLASS.backslash;
  c[0x7b] = CLASS.braceOpen;
  c[0x7d] = CLASS.braceClose;
  c[0x5b] = CLASS.bracketOpen;
  c[0x5d] = CLASS.bracketClose;
  c[0x3c] = CLASS.lt;
  c[0x3e] = CLASS.gt;
  c[0x2f] = CLASS.slash;
  return c;
})();

export interface AddedSymbol {
  id: number;
  content: string;
}

/**
 * Trie nodes in preorder (the root is implicit, depth 0). For node i:
 *   byte[i]        the byte on the edge into i; depth[i] its depth (1 = first byte of a token)
 *   skip[i]        index of the first node after i's subtree
 *   tokStart[i]    first position in `sortedIds` of a token in i's subtree (tokens equal to i come first)
 *   tokHere[i]     how many tokens end exactly at i (duplicates are possible)
 *   tokEnd[i]      one past the last position in `sortedIds` of i's subtree
 *   below[i]       OR of BYTE_CLASS over every byte strictly below i
 */
export interface VocabIndex {
  readonly vocabSize: number;
  readonly words: number;                // Uint32 words of a mask: ceil(vocabSize / 32)
  readonly nodeCount: number;
  readonly maxDepth: number;
  readonly byte: Uint8Array;
  readonly depth: Uint16Array;
  readonly skip: Int32Array;
  readonly tokStart: Int32Array;
  readonly tokHere: Int32Array;
  readonly tokEnd: Int32Array;
  readonly below: Uint16Array;
  readonly sortedIds: Int32Array;
  readonly added: readonly AddedSymbol[];
  readonly buildMs: number;
}

const cache = new WeakMap<Tokenizer, VocabIndex>();

/** The index of a tokenizer's vocabulary, built once per tokenizer. */
export function vocabIndexFor(tokenizer: Tokenizer): VocabIndex {
  let index = cache.get(tokenizer);
  if (!index) {
    index = buildVocabIndex(tokenizer.tokenByteTable(), [...tokenizer.addedTokens.values()]);
    cache.set(tokenizer, index);
  }
  return index;
}

/**
 * Builds the trie by MSD radix sort: a group of tokens sharing a prefix of d bytes is one node; its
 * children are the groups of the byte at d, in byte order, tokens that end first. Linear in total bytes.
 */
export function buildVocabIndex(table: TokenByteTable, added: readonly AddedSymbol[]): VocabIndex {
  const t0 = performance.now();
  const vocabSize = table.offsets.length - 1;
  const addedIds = new Set(added.map((a) => a.id));
  const flat = table.bytes;
  const off = table.offsets;                 // token id's bytes: flat[off[id], off[id] + len[id])
  const len = new Int32Array(vocabSize);
  const list: number[] = [];
  let totalBytes = 0;
  for (let id = 0; id < vocabSize; id++) {
    len[id] = off[id + 1] - off[id];
    if (addedIds.has(id) || len[id] === 0) continue;
    list.push(id);
    totalBytes += len[id];
  }
  const ids = Int32Array.from(list);
  const cap = totalBytes + 1;
  const byte = new Uint8Array(cap);
  const depth = new Uint16Array(cap);
  const skip = new Int32Array(cap);
  const tokStart = new Int32Array(cap);
  const tokHere = new Int32Array(cap);
  const tokEnd = new Int32Array(cap);
  const below = new Uint16Array(cap);
  const scratch = new Int32Array(ids.length);
  const starts: Int32Array[] = [];      // bucket starts per depth (257 entries), reused
  const fills: Int32Array[] = [];       // scatter cursors per depth
  let nodes = 0;
  let maxDepth = 0;

  /** One token alone below its prefix: a chain of nodes. Returns the classes of its bytes from d on. */
  const chain = (pos: number, d: number): number => {
    const id = ids[pos];
    const first = nodes;
    for (let k = d; k < len[id]; k++) {
      byte[nodes] = flat[off[id] + k];
      depth[nodes] = k + 1;
      tokStart[nodes] = pos;
      tokEnd[nodes] = pos + 1;
      nodes++;
    }
    tokHere[nodes - 1] = 1;
    let classes = 0;
    for (let n = nodes - 1; n >= first; n--) {
      below[n] = classes;
      skip[n] = nodes;
      classes |= BYTE_CLASS[byte[n]];
    }
    maxDepth = Math.max(maxDepth, len[id]);
    return classes;
  };

  /** The node for byte b at depth d+1 over the bucket ids[s, e). Returns the classes of b and below. */
  const node = (s: number, e: number, d: number, b: number): number => {
    const n = nodes++;
    byte[n] = b;
    depth[n] = d + 1;
    tokStart[n] = s;
    tokEnd[n] = e;
    let w = s;                         // tokens that end here go first
    for (let p = s; p < e; p++) {
      if (len[ids[p]] === d + 1) { const t = ids[p]; ids[p] = ids[w]; ids[w++] = t; }
    }
    tokHere[n] = w - s;
    maxDepth = Math.max(maxDepth, d + 1);
    below[n] = w === e ? 0 : e - w === 1 ? chain(w, d + 1) : group(w, e, d + 1);
    skip[n] = nodes;
    return below[n] | BYTE_CLASS[b];
  };

  /** Tokens ids[lo, hi) share bytes [0, d) and are all longer than d. Returns the classes of bytes >= d. */
  const group = (lo: number, hi: number, d: number): number => {
    if (hi - lo === 1) return chain(lo, d);
    const st = (starts[d] ??= new Int32Array(257));
    if (hi - lo <= 64) {
      // Small group: insertion sort by the byte at d, then mark bucket edges (no 256-wide passes).
      for (let p = lo + 1; p < hi; p++) {
        const t = ids[p];
        const key = flat[off[t] + d];
        let q = p - 1;
        while (q >= lo && flat[off[ids[q]] + d] > key) { ids[q + 1] = ids[q]; q--; }
        ids[q + 1] = t;
      }
      let classes = 0;
      for (let s = lo; s < hi;) {
        const b = flat[off[ids[s]] + d];
        let e = s + 1;
        while (e < hi && flat[off[ids[e]] + d] === b) e++;
        classes |= node(s, e, d, b);
        s = e;
      }
      return classes;
    }
    st.fill(0);
    for (let p = lo; p < hi; p++) st[flat[off[ids[p]] + d] + 1]++;
    st[0] = lo;
    for (let b = 1; b <= 256; b++) st[b] += st[b - 1];
    // st[b] is now the end of bucket b-1 = start of bucket b; scatter by byte (stable), then copy back.
    const fill = (fills[d] ??= new Int32Array(256));
    fill.set(st.subarray(0, 256));
    for (let p = lo; p < hi; p++) scratch[fill[flat[off[ids[p]] + d]]++] = ids[p];
    ids.set(scratch.subarray(lo, hi), lo);
    let classes = 0;
    for (let b = 0; b < 256; b++) {
      const s = st[b];
      const e = st[b + 1];
      if (s === e) continue;
      classes |= node(s, e, d, b);
    }
    return classes;
  };
  if (ids.length > 0) group(0, ids.length, 0);
  return {
    vocabSize, words: Math.ceil(vocabSize / 32), nodeCount: nodes, maxDepth,
    byte, depth, skip, tokStart, tokHere, tokEnd, below, sortedIds: ids,
    added: added.map((a) => ({ id: a.id, content: a.content })),
    buildMs: performance.now() - t0,
  };
}
