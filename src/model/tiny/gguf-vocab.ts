// Vocabularies for tiny GGUF models, in tokenizer.ggml.* form:
//   - from a tokenizer.json (the real Qwen3 one for tests), the way convert_hf_to_gguf.py's
//     get_vocab_base writes it: one entry per id up to vocab_size, "[PAD<id>]" fillers of type UNUSED,
//     added tokens CONTROL when special or "<|…|>"-shaped, else USER_DEFINED;
//   - a small byte-level BPE trained here on a built-in corpus (not Qwen's), so tests can show the
//     tokenizer really is built from the metadata.

import type { GgufVocab } from './tiny-gguf.ts';

const NORMAL = 1, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5;

type Json = Record<string, unknown>;

export function ggufVocabFromTokenizerJson(tokenizerJson: Json, tokenizerConfig: Json, vocabSize: number, bosId?: number): GgufVocab {
  const model = tokenizerJson.model as { vocab: Record<string, number>; merges: (string | string[])[] };
  const added = (tokenizerJson.added_tokens ?? []) as { id: number; content: string; special?: boolean }[];
  const tokens: string[] = new Array(vocabSize);
  const tokenTypes: number[] = new Array(vocabSize).fill(NORMAL);
  for (const [t, id] of Object.entries(model.vocab)) if (id < vocabSize) tokens[id] = t;
  for (const a of added) {
    if (a.id >= vocabSize) continue;
    tokens[a.id] = a.content;
    const looksSpecial = a.content.startsWith('<|') && a.content.endsWith('|>');
    tokenTypes[a.id] = a.special || looksSpecial ? CONTROL : USER_DEFINED;
  }
  for (let i = 0; i < vocabSize; i++) {
    if (tokens[i] === undefined) { tokens[i] = `[PAD${i}]`; tokenTypes[i] = UNUSED; }
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : (v as { content?: string } | null)?.content);
  const idOf = (v: unknown) => { const t = text(v); return t === undefined ? undefined : tokens.indexOf(t); };
  const eos = idOf(tokenizerConfig.eos_token);
  if (eos === undefined || eos < 0) throw new RangeError('tokenizer_config.json names no eos_token in the vocabulary');
  const pad = idOf(tokenizerConfig.pad_token);
  return {
    tokens, tokenTypes,
    merges: model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m)),
    pre: 'qwen2', eos,
    ...(pad !== undefined && pad >= 0 ? { pad } : {}),
    ...(bosId !== undefined ? { bos: bosId } : {}),
    chatTemplate: String(tokenizerConfig.chat_template ?? ''),
  };
}

/** GPT-2's byte → printable character map (the byte-level BPE alphabet). */
export function byteToUnicode(): string[] {
  const out: string[] = new Array(256);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    out[b] = String.fromCharCode(printable ? b : 256 + next++);
  }
  return out;
}

/** GPT-2's pre-tokenizer split (tokenizer.ggml.pre "gpt-2"). */
export const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const CORPUS = `The tiny model's vocabulary is learned from this paragraph, not from Qwen.
function add(a, b) { return a + b; }  const items = [1, 2, 3].map((x) => x * 2);
<div class="app"><h1>Hello, world!</h1></div>  body { margin: 0; padding: 8px; }
Rooms pool phones and laptops into one model; each device runs its own layers.
if (error) throw new Error("not found"); else console.log('done', count);`;

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const USER_TOKENS = ['<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<think>', '</think>'];

/**
 * A byte-level BPE of 256 byte tokens + `merges` merges learned greedily on CORPUS (most frequent pair
 * first, ties by the pair's text), then ChatML control tokens and the tool/think user tokens.
 */
export function tinyBpeVocab(chatTemplate: string, merges = 200): GgufVocab {
  const b2u = byteToUnicode();
  const utf8 = new TextEncoder();
  const words = new Map<string, number>();
  for (const piece of CORPUS.match(GPT2_SPLIT) ?? []) {
    const w = Array.from(utf8.encode(piece), (b) => b2u[b]!).join('\u0000');
    words.set(w, (words.get(w) ?? 0) + 1);
  }
  let seqs = [...words].map(([w, n]) => ({ sym: w.split('\u0000'), n }));
  const tokens = [...b2u];
  const mergeList: string[] = [];
  const known = new Set(tokens);
  while (mergeList.length < merges) {
    const counts = new Map<string, number>();
    for (const { sym, n } of seqs) for (let i = 0; i + 1 < sym.length; i++) {
      if (known.has(sym[i]! + sym[i + 1]!)) continue;          // keep token strings unique
      const key = `${sym[i]} ${sym[i + 1]}`;
      counts.set(key, (counts.get(key) ?? 0) + n);
    }
    let best = '', bestN = 1;
    for (const [key, n] of counts) if (n > bestN || (n === bestN && best !== '' && key < best)) { best = key; bestN = n; }
    if (best === '') break;
    const [a, b] = best.split(' ') as [string, string];
    known.add(a + b);
    mergeList.push(best);
    tokens.push(a + b);
    seqs = seqs.map(({ sym, n }) => {
      const out: string[] = [];
      for (let i = 0; i < sym.length; i++) {
        if (i + 1 < sym.length && sym[i] === a && sym[i + 1] === b) { out.push(a + b); i++; } else out.push(sym[i]!);
      }
      return { sym: out, n };
    });
  }
  const tokenTypes = tokens.map(() => NORMAL);
  for (const s of SPECIALS) { tokens.push(s); tokenTypes.push(CONTROL); }
  for (const s of USER_TOKENS) { tokens.push(s); tokenTypes.push(USER_DEFINED); }
  return {
    tokens, tokenTypes, merges: mergeList, pre: 'gpt-2',
    eos: tokens.indexOf('<|im_end|>'), pad: tokens.indexOf('<|endoftext|>'), bos: tokens.indexOf('<|endoftext|>'),
    chatTemplate,
  };
}
