// The tokenizer of a GGUF model, built from its metadata alone (tokenizer.ggml.*) as the tokenizer.json
// and tokenizer_config.json objects @huggingface/tokenizers reads, so a .gguf is a complete model.
//   tokens[i], token_type[i]: 1 normal (BPE vocabulary), 3 control (special added token), 4 user-defined
//     (added, not special: Qwen3's <tool_call>, <think>), 5 unused (llama.cpp's "[PAD151669]" fillers,
//     left out like HF leaves them out), 6 byte.
//   merges: "Ġ Ġ" strings in rank order; model "gpt2" = byte-level BPE; pre = the pre-tokenizer regex.
// HF's Qwen2Tokenizer normalises text to NFC before splitting; llama.cpp does not. We follow HF (the
// model's own tokenizer.json), so ids equal tokenizer.json's for any input, NFD included.

import { UnsupportedTokenizerError } from '../../errors.ts';
import type { GgufMetadataValue } from './gguf-read.ts';

type Meta = Record<string, GgufMetadataValue>;
type Json = Record<string, unknown>;

/** Pre-tokenizer regexes by tokenizer.ggml.pre (the tokenizer.json originals llama.cpp lists). */
const PRE_REGEX: Record<string, string | null> = {
  qwen2: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  'deepseek-r1-qwen': "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  // Qwen3.5's 248k vocabulary: qwen2's split with combining marks (\p{M}) kept with their letters.
  qwen35: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  'llama-bpe': "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  'gpt-2': null,                              // GPT-2's own split (ByteLevel use_regex)
  default: null,
};
const NFC_PRE = new Set(['qwen2', 'qwen35', 'deepseek-r1-qwen']);

const CONTROL = 3, USER_DEFINED = 4, UNUSED = 5;

function strings(m: Meta, key: string, file: string): string[] {
  const v = m[key];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) {
    throw new UnsupportedTokenizerError(`GGUF metadata "${key}" is missing or not a list of strings`, { file });
  }
  return v as string[];
}

export interface GgufTokenizerObjects {
  tokenizerJson: Json;
  tokenizerConfig: Json;
}

/** tokenizer.json + tokenizer_config.json equivalents of a GGUF's tokenizer metadata. */
export function ggufTokenizerObjects(m: Meta, file: string): GgufTokenizerObjects {
  const model = m['tokenizer.ggml.model'];
  if (model !== 'gpt2') {
    throw new UnsupportedTokenizerError(`tokenizer.ggml.model "${String(model)}" is not supported (byte-level BPE "gpt2" only)`, { file });
  }
  const pre = typeof m['tokenizer.ggml.pre'] === 'string' ? m['tokenizer.ggml.pre'] : 'default';
  if (!(pre in PRE_REGEX)) {
    throw new UnsupportedTokenizerError(`pre-tokenizer "${pre}" is not supported (${Object.keys(PRE_REGEX).join(', ')})`, { file });
  }
  const tokens = strings(m, 'tokenizer.ggml.tokens', file);
  const merges = strings(m, 'tokenizer.ggml.merges', file);
  const typesRaw = m['tokenizer.ggml.token_type'];
  const types = Array.isArray(typesRaw) ? (typesRaw as number[]) : [];
  if (types.length !== 0 && types.length !== tokens.length) {
    throw new UnsupportedTokenizerError(`token_type has ${types.length} entries for ${tokens.length} tokens`, { file });
  }
  const vocab: Record<string, number> = {};
  const added: Json[] = [];
  tokens.forEach((t, id) => {
    const type = types[id] ?? 1;
    if (type === UNUSED) return;
    if (type === CONTROL || type === USER_DEFINED) {
      added.push({ id, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: type === CONTROL });
    } else vocab[t] = id;
  });
  const regex = PRE_REGEX[pre]!;
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: regex === null };
  const tokenizerJson: Json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: NFC_PRE.has(pre) ? { type: 'NFC' } : null,
    pre_tokenizer: regex === null ? byteLevel : {
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false }, byteLevel],
    },
    post_processor: { ...byteLevel, use_regex: false },
    decoder: { ...byteLevel, use_regex: false },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: merges.map((s) => s.split(' ')),
    },
  };
  const idText = (key: string): string | undefined => {
    const id = m[key];
    return typeof id === 'number' ? tokens[id] : undefined;
  };
  const template = m['tokenizer.chat_template'];
  const tokenizerConfig: Json = {
    add_bos_token: m['tokenizer.ggml.add_bos_token'] === true,
    add_prefix_space: false,
    bos_token: idText('tokenizer.ggml.bos_token_id') ?? null,
    eos_token: idText('tokenizer.ggml.eos_token_id') ?? null,
    pad_token: idText('tokenizer.ggml.padding_token_id') ?? null,
    clean_up_tokenization_spaces: false,
    split_special_tokens: false,
    ...(typeof template === 'string' ? { chat_template: template } : {}),
  };
  return { tokenizerJson, tokenizerConfig };
}
