// The model's own tokenizer: tokenizer.json + tokenizer_config.json through @huggingface/tokenizers.
// Adds what the agent needs beyond encode/decode: the ids of the chat/tool special tokens, and the raw
// bytes of every token id (the grammar walks a trie of them; byte-level BPE tokens can hold half a
// UTF-8 character, so bytes — not strings — are the exact unit).
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { HeaderError, ModelSourceError } from './errors.ts';
import { cachedGgufModel } from './formats/gguf/gguf-read.ts';
import { ggufTokenizerObjects } from './formats/gguf/gguf-tokenizer.ts';
import type { ModelSource } from './types.ts';

/** Ids of the tokens the chat format and the agent use. Looked up by text, so other vocabularies work. */
export interface SpecialTokenIds {
  imStart: number;             // <|im_start|>   (Qwen3: 151644)
  imEnd: number;               // <|im_end|>     (151645)
  endOfText?: number;          // <|endoftext|>  (151643)
  toolCall?: number;           // <tool_call>    (151657)
  toolCallEnd?: number;        // </tool_call>   (151658)
  toolResponse?: number;       // <tool_response>  (151665)
  toolResponseEnd?: number;    // </tool_response> (151666)
  think?: number;              // <think>        (151667)
  thinkEnd?: number;           // </think>       (151668)
}

/** The bytes of every id in one buffer: id's bytes are bytes[offsets[id], offsets[id + 1]). */
export interface TokenByteTable {
  bytes: Uint8Array;
  offsets: Int32Array;         // [vocabSize + 1]
}

/** Packs per-id byte arrays into one table (tests and synthetic vocabularies). */
export function tokenByteTableFrom(perId: readonly Uint8Array[]): TokenByteTable {
  const offsets = new Int32Array(perId.length + 1);
  for (let id = 0; id < perId.length; id++) offsets[id + 1] = offsets[id] + perId[id].length;
  const bytes = new Uint8Array(offsets[perId.length]);
  perId.forEach((b, id) => bytes.set(b, offsets[id]));
  return { bytes, offsets };
}

export interface AddedTokenInfo {
  id: number;
  content: string;
  special: boolean;            // tool/think tokens are `special: false` in Qwen3, yet still added tokens
}

type Json = Record<string, unknown>;

const TOKENIZER_FILE = 'tokenizer.json';
const CONFIG_FILE = 'tokenizer_config.json';

/** GPT-2 byte-level alphabet: printable bytes map to themselves, the rest to U+0100 onwards. Index = char code. */
function byteLevelDecodeTable(): Int16Array {
  const table = new Int16Array(512).fill(-1);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table[printable ? b : 256 + next++] = b;
  }
  return table;
}

export class Tokenizer {
  /** Ids 0..vocabSize-1 are all valid (base vocabulary + added tokens), e.g. 151,669 for Qwen3. */
  readonly vocabSize: number;
  readonly special: SpecialTokenIds;
  /** Added tokens (special or not) by id. Their text is matched whole by encode. */
  readonly addedTokens: ReadonlyMap<number, AddedTokenInfo>;
  /** The tokenizer_config.json object (holds chat_template, eos_token, ...). */
  readonly config: Json;

  private readonly hf: HfTokenizer;
  private readonly byteLevel: boolean;
  private byteTable: TokenByteTable | null = null;
  private bytesCache: Uint8Array[] | null = null;

  private constructor(tokenizerJson: Json, config: Json, label: string) {
    this.config = config;
    try {
      this.hf = new HfTokenizer(tokenizerJson, config);
    } catch (cause) {
      throw new HeaderError(`not a tokenizer this app can read (${(cause as Error).message})`, { file: label, cause });
    }
    const model = tokenizerJson.model as { vocab?: Record<string, number> } | undefined;
    const added = (tokenizerJson.added_tokens ?? []) as { id: number; content: string; special?: boolean }[];
    const addedMap = new Map<number, AddedTokenInfo>();
    let maxId = -1;
    for (const t of added) {
      addedMap.set(t.id, { id: t.id, content: t.content, special: t.special === true });
      maxId = Math.max(maxId, t.id);
    }
    for (const id of Object.values(model?.vocab ?? {})) if (id > maxId) maxId = id;
    this.vocabSize = maxId + 1;
    this.addedTokens = addedMap;
    const decoder = tokenizerJson.decoder as { type?: string } | null | undefined;
    this.byteLevel = decoder?.type === 'ByteLevel';

    const id = (text: string): number | undefined => this.hf.token_to_id(text);
    const imStart = id('<|im_start|>');
    const imEnd = id('<|im_end|>');
    if (imStart === undefined || imEnd === undefined) {
      throw new HeaderError('no <|im_start|>/<|im_end|> tokens: not a ChatML (Qwen) tokenizer', { file: label });
    }
    this.special = {
      imStart, imEnd,
      endOfText: id('<|endoftext|>'),
      toolCall: id('<tool_call>'), toolCallEnd: id('</tool_call>'),
      toolResponse: id('<tool_response>'), toolResponseEnd: id('</tool_response>'),
      think: id('<think>'), thinkEnd: id('</think>'),
    };
  }

  /** From the parsed tokenizer.json and tokenizer_config.json objects. `label` names them in errors. */
  static fromObjects(tokenizerJson: unknown, tokenizerConfig: unknown, label = TOKENIZER_FILE): Tokenizer {
    if (!isObject(tokenizerJson)) throw new HeaderError('tokenizer.json is not a JSON object', { file: label });
    if (!isObject(tokenizerConfig)) throw new HeaderError('tokenizer_config.json is not a JSON object', { file: label });
    return new Tokenizer(tokenizerJson, tokenizerConfig, label);
  }

  /** Reads tokenizer.json and tokenizer_config.json from a model source (a GGUF: its metadata). */
  static async fromSource(source: ModelSource): Promise<Tokenizer> {
    if (source.modelFile) {
      const model = await cachedGgufModel(source, source.modelFile);
      const { tokenizerJson, tokenizerConfig } = ggufTokenizerObjects(model.metadata, model.files[0]!);
      return Tokenizer.fromObjects(tokenizerJson, tokenizerConfig, `${source.label} (GGUF tokenizer metadata)`);
    }
    const [json, config] = await Promise.all([readJson(source, TOKENIZER_FILE), readJson(source, CONFIG_FILE)]);
    return Tokenizer.fromObjects(json, config, `${source.label}/${TOKENIZER_FILE}`);
  }

  /** Text -> ids. Added tokens in the text (<|im_start|>, <tool_call>, ...) become their ids; no BOS. */
  encode(text: string): number[] {
    return this.hf.encode(text, { add_special_tokens: false }).ids;
  }

  /** Ids -> text, special tokens included (the chat template's own text round-trips). */
  decode(ids: number[]): string {
    if (ids.length === 0) return '';
    return this.hf.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  /** The vocabulary entry of an id ("Ġhello", "<|im_end|>"), or undefined. */
  idToToken(id: number): string | undefined {
    return this.hf.id_to_token(id);
  }

  tokenToId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  /** Ids that end a reply: <|im_end|> and <|endoftext|>. */
  stopTokenIds(): number[] {
    return [this.special.imEnd, ...(this.special.endOfText === undefined ? [] : [this.special.endOfText])];
  }

  /**
   * The exact bytes each id stands for, in one table (empty for ids with no entry). Byte-level BPE maps
   * its alphabet back to bytes; an added token is its UTF-8 text. Built once (no per-token allocation).
   */
  tokenByteTable(): TokenByteTable {
    if (this.byteTable) return this.byteTable;
    const utf8 = new TextEncoder();
    const table = this.byteLevel ? byteLevelDecodeTable() : null;
    const entries: (string | Uint8Array)[] = new Array(this.vocabSize);
    const offsets = new Int32Array(this.vocabSize + 1);
    for (let id = 0; id < this.vocabSize; id++) {
      const added = this.addedTokens.get(id);
      const entry = this.hf.id_to_token(id);
      let e: string | Uint8Array;
      if (added) e = utf8.encode(added.content);
      else if (entry === undefined) e = '';
      else if (table && isByteLevelText(entry, table)) e = entry;           // one byte per char
      else e = utf8.encode(table ? entry : this.hf.decode([id]));
      entries[id] = e;
      offsets[id + 1] = offsets[id] + e.length;
    }
    const bytes = new Uint8Array(offsets[this.vocabSize]);
    for (let id = 0; id < this.vocabSize; id++) {
      const e = entries[id];
      let at = offsets[id];
      if (typeof e === 'string') for (let i = 0; i < e.length; i++) bytes[at++] = table![e.charCodeAt(i)];
      else bytes.set(e, at);
    }
    this.byteTable = { bytes, offsets };
    return this.byteTable;
  }

  /** The exact bytes of one id (a view into tokenByteTable()). */
  tokenBytes(id: number): Uint8Array {
    const { bytes, offsets } = this.tokenByteTable();
    if (id < 0 || id >= this.vocabSize) return new Uint8Array(0);
    return bytes.subarray(offsets[id], offsets[id + 1]);
  }

  /** The bytes of every id as separate views (index = id). */
  allTokenBytes(): readonly Uint8Array[] {
    if (!this.bytesCache) {
      const { bytes, offsets } = this.tokenByteTable();
      this.bytesCache = Array.from({ length: this.vocabSize }, (_, id) => bytes.subarray(offsets[id], offsets[id + 1]));
    }
    return this.bytesCache;
  }

  /**
   * The decoded text of every id. A token holding part of a UTF-8 character decodes its bytes leniently
   * (U+FFFD for the incomplete part); use allTokenBytes() where exactness matters.
   */
  allTokenTexts(): string[] {
    const dec = new TextDecoder('utf-8', { fatal: false });
    return this.allTokenBytes().map((b) => dec.decode(b));
  }
}

function isByteLevelText(entry: string, table: Int16Array): boolean {
  for (let i = 0; i < entry.length; i++) {
    const c = entry.charCodeAt(i);
    if (c >= table.length || table[c] < 0) return false;
  }
  return true;
}

function isObject(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

async function readJson(source: ModelSource, file: string): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = await source.readFile(file);
  } catch (cause) {
    if (cause instanceof ModelSourceError) throw cause;
    throw new ModelSourceError(`cannot read (${(cause as Error).message})`, { file: `${source.label}/${file}`, cause });
  }
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (cause) {
    throw new HeaderError(`JSON does not parse (${(cause as Error).message})`, { file: `${source.label}/${file}`, cause });
  }
}
