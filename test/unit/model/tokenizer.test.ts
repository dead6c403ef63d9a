import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundledQwen3TokenizerPaths } from '../../../src/model/bundled-tokenizer.ts';
import { HeaderError, ModelSourceError } from '../../../src/model/errors.ts';
import { Tokenizer } from '../../../src/model/tokenizer.ts';
import type { ModelSource } from '../../../src/model/types.ts';

/** An in-memory model folder. */
function memorySource(files: Record<string, string>, label = 'mem://tiny'): ModelSource {
  const enc = new TextEncoder();
  return {
    label,
    async readFile(path) {
      if (!(path in files)) throw new ModelSourceError('not found', { file: `${label}/${path}` });
      return enc.encode(files[path]);
    },
    async readRange(path, start, end) { return (await this.readFile(path)).slice(start, end); },
    async exists(path) { return path in files; },
  };
}

const paths = bundledQwen3TokenizerPaths();
const files = {
  'tokenizer.json': readFileSync(paths.tokenizerJson, 'utf8'),
  'tokenizer_config.json': readFileSync(paths.tokenizerConfig, 'utf8'),
};

describe('Tokenizer (real Qwen3 files)', () => {
  let tok: Tokenizer;
  beforeAll(async () => { tok = await Tokenizer.fromSource(memorySource(files)); });

  it('knows the special token ids of Qwen3 (docs/platform.md)', () => {
    expect(tok.special).toEqual({
      imStart: 151644, imEnd: 151645, endOfText: 151643, toolCall: 151657, toolCallEnd: 151658,
      toolResponse: 151665, toolResponseEnd: 151666, think: 151667, thinkEnd: 151668,
    });
    expect(tok.vocabSize).toBe(151669);
    expect(tok.stopTokenIds()).toEqual([151645, 151643]);
    expect(tok.idToToken(151657)).toBe('<tool_call>');
    expect(tok.tokenToId('<|im_end|>')).toBe(151645);
  });

  it('encodes added tokens whole, adds no BOS, and decodes back exactly', () => {
    const text = '<|im_start|>user\nhello <tool_call>\n{"a": 1}</tool_call><|im_end|>';
    const ids = tok.encode(text);
    expect(ids).toEqual([151644, 872, 198, 14990, 220, 151657, 198, 4913, 64, 788, 220, 16, 92, 151658, 151645]);
    expect(tok.decode(ids)).toBe(text);
    expect(tok.encode('')).toEqual([]);
    expect(tok.decode([])).toBe('');
  });

  it('gives the exact bytes of every token, including tokens that split a UTF-8 character', () => {
    const all = tok.allTokenBytes();
    expect(all.length).toBe(151669);
    expect([...tok.tokenBytes(220)]).toEqual([0x20]);        // "Ġ"
    expect([...tok.tokenBytes(198)]).toEqual([0x0a]);        // "Ċ"
    expect(new TextDecoder().decode(tok.tokenBytes(151657))).toBe('<tool_call>');
    const text = 'naïve café — 你好世界 🙂 龘 <div class="x">\n\tok</div>';
    const ids = tok.encode(text);
    const joined = ids.flatMap((id) => [...tok.tokenBytes(id)]);
    expect(joined).toEqual([...new TextEncoder().encode(text)]);
    // At least one of these tokens holds an incomplete UTF-8 sequence: its lenient text shows U+FFFD.
    const texts = tok.allTokenTexts();
    expect(ids.some((id) => texts[id].includes('\uFFFD'))).toBe(true);
    expect(texts[14990]).toBe('hello');
  });

  it('names the file when tokenizer JSON is bad or missing', async () => {
    await expect(Tokenizer.fromSource(memorySource({ ...files, 'tokenizer.json': '{"model": ' })))
      .rejects.toThrow(HeaderError);
    await expect(Tokenizer.fromSource(memorySource({ ...files, 'tokenizer.json': '{"model": ' })))
      .rejects.toThrow(/mem:\/\/tiny\/tokenizer\.json: JSON does not parse/);
    await expect(Tokenizer.fromSource(memorySource({ 'tokenizer.json': files['tokenizer.json'] })))
      .rejects.toThrow(/mem:\/\/tiny\/tokenizer_config\.json: not found/);
    expect(() => Tokenizer.fromObjects([], {}, 'x/tokenizer.json')).toThrow(/x\/tokenizer\.json: tokenizer\.json is not a JSON object/);
    expect(() => Tokenizer.fromObjects({ model: { type: 'Nope' } }, {}, 'x/tokenizer.json')).toThrow(/^x\/tokenizer\.json: not a tokenizer this app can read/);
    const noChatMl = { model: { type: 'BPE', vocab: { a: 0, b: 1 }, merges: [] }, added_tokens: [], decoder: null, pre_tokenizer: null, normalizer: null, post_processor: null };
    expect(() => Tokenizer.fromObjects(noChatMl, {}, 'llama/tokenizer.json')).toThrow(HeaderError);
    expect(() => Tokenizer.fromObjects(noChatMl, {}, 'llama/tokenizer.json')).toThrow(/^llama\/tokenizer\.json: no <\|im_start\|>\/<\|im_end\|> tokens/);
  });
});
