// The tokenizer built from GGUF metadata alone: with Qwen3's vocabulary it encodes a corpus of code,
// CJK, emoji, whitespace runs, special tokens and NFD text to exactly the ids of Qwen3's own
// tokenizer.json; with a small non-Qwen BPE it matches an independent naive BPE written here.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadBundledQwen3Tokenizer } from '../../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../../src/model/chat-template.ts';
import { resolveModelSource } from '../../../../src/model/sources/resolve.ts';
import { Tokenizer } from '../../../../src/model/tokenizer.ts';
import { tinyGgufModel } from '../../../helpers/tiny-model.ts';

const CODE = [
  'function add(a, b) {\n  return a + b;\n}', 'const x = [1, 2, 3].map((v) => v * 2);', 'if (err) throw new Error("boom");',
  '<div class="app"><h1>Hello</h1></div>', 'body { margin: 0; padding: 8px 16px; }', 'def f(x):\n\treturn x ** 2\n',
  'SELECT * FROM users WHERE id = 42;', '#include <stdio.h>\nint main(void) { return 0; }', 'let s = `${a}-${b}`;',
  "it's we're they've I'm you'll he'd", 'ALL CAPS AND numbers 1234567890', 'snake_case camelCase PascalCase kebab-case',
  'x+=1;y-=2;z*=3;w/=4;', '0x1F 0b1010 1e-9 3.14159', 'https://example.com/path?q=1&r=2#frag', '@decorator\nclass A:\n    pass',
  '// comment\n/* block */\n/** doc */', 'await fetch("/api").then((r) => r.json());', 'a && b || !c ?? d', 'λx.x → ∀y∃z',
];
const CJK = ['你好，世界！', '我们一起写代码。', '日本語のテキストです', '한국어 문장입니다', '漢字とひらがなとカタカナ', '繁體中文與简体中文',
  '这是一个很长的句子，用来测试分词器是否与原始分词器一致。', '「引用」『二重』（括弧）', '数字１２３と全角ＡＢＣ', '混合 mixed 文本 text'];
const EMOJI = ['👍', '🎉🎉🎉', '👨‍👩‍👧‍👦 family', '🇯🇵 flag', 'smile 😀 and cry 😢', '❤️‍🔥', '🧑🏽‍💻 coding', '✅ done ❌ failed', '🚀'.repeat(5), 'a🙂b🙃c'];
const SPACE = ['  two spaces', '\t\ttabs', 'trailing   ', '\n\n\nnewlines', ' \n \n ', 'a\r\nb\r\n', '    indented\n        more', '\u00a0nbsp\u00a0', ' ', '\t \t \n'];
const SPECIAL = ['<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n', '<tool_call>\n{"name": "f"}\n</tool_call>', '<think>\n\n</think>\n\n',
  '<|endoftext|>', 'text<|im_end|>more', '<tool_response>ok</tool_response>'];
const NFD = ['Cafe\u0301', 'e\u0301le\u0300ve', 'n\u0303o', 'A\u030a'];

function corpus(): string[] {
  const out = [...CODE, ...CJK, ...EMOJI, ...SPACE, ...SPECIAL, ...NFD];
  // Mixtures and slices, so that boundaries fall everywhere.
  for (let i = 0; i < 40; i++) out.push(`${CODE[i % CODE.length]} ${CJK[i % CJK.length]} ${EMOJI[i % EMOJI.length]}${SPACE[i % SPACE.length]}`);
  const points = Array.from(CODE.join('\n') + CJK.join('') + EMOJI.join(' '));   // code points: no lone surrogates
  for (let i = 0; i < 80; i++) {
    const a = (i * 37) % points.length;
    out.push(points.slice(a, a + 5 + ((i * 13) % 60)).join(''));
  }
  for (let i = 0; i < 20; i++) out.push(' '.repeat(i + 1) + 'x' + '\n'.repeat(i % 4) + '\t'.repeat(i % 3));
  return out;
}

describe('GGUF tokenizer with the Qwen3 vocabulary', () => {
  let gguf: Tokenizer;
  let reference: Tokenizer;
  beforeAll(async () => {
    const m = await tinyGgufModel({ layers: 1, seed: 1, fileType: 'Q8_0' });
    gguf = await Tokenizer.fromSource(await resolveModelSource(m.path));
    reference = await loadBundledQwen3Tokenizer();
  }, 180_000);

  it('encodes ≥200 strings to the same ids as tokenizer.json', () => {
    const texts = corpus();
    expect(texts.length).toBeGreaterThanOrEqual(200);
    for (const t of texts) expect(gguf.encode(t), JSON.stringify(t)).toEqual(reference.encode(t));
  });

  it('has the same vocabulary size, special ids and token bytes', () => {
    expect(gguf.vocabSize).toBe(reference.vocabSize);
    expect(gguf.special).toEqual(reference.special);
    for (const id of [0, 13, 785, 151643, 151657, 151668, 99999]) expect(Array.from(gguf.tokenBytes(id))).toEqual(Array.from(reference.tokenBytes(id)));
    expect(gguf.decode(gguf.encode(corpus().join('|')))).toBe(reference.decode(reference.encode(corpus().join('|'))));
  });

  it('the chat template comes from the metadata and says JSON calls', () => {
    const t = ChatTemplate.fromTokenizerConfig(gguf.config, 'gguf');
    expect(t.format).toBe('json');
    expect(t.render([{ role: 'user', content: 'hi' }], [])).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  });
});

/** GPT-2's byte-level BPE, written from its definition: split, map bytes, merge the best-ranked pair. */
function naiveBpe(tokens: string[], merges: string[], specials: string[], text: string): number[] {
  const b2u: string[] = [];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    b2u.push(String.fromCharCode(keep ? b : 256 + n++));
  }
  const rank = new Map(merges.map((m, i) => [m, i]));
  const id = new Map(tokens.map((t, i) => [t, i]));
  const out: number[] = [];
  const pattern = new RegExp(`(${specials.map((s) => s.replace(/[|<>/]/g, (c) => `\\${c}`)).join('|')})`);
  for (const part of text.split(pattern)) {
    if (part === '') continue;
    if (specials.includes(part)) { out.push(id.get(part)!); continue; }
    for (const piece of part.match(/'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu) ?? []) {
      let sym = Array.from(new TextEncoder().encode(piece), (b) => b2u[b]!);
      for (;;) {
        let best = -1, at = -1;
        for (let i = 0; i + 1 < sym.length; i++) {
          const r = rank.get(`${sym[i]} ${sym[i + 1]}`);
          if (r !== undefined && (best < 0 || r < best)) { best = r; at = i; }
        }
        if (at < 0) break;
        sym = [...sym.slice(0, at), sym[at]! + sym[at + 1]!, ...sym.slice(at + 2)];
      }
      for (const s of sym) out.push(id.get(s)!);
    }
  }
  return out;
}

describe('GGUF tokenizer with a small non-Qwen BPE vocabulary', () => {
  let tok: Tokenizer;
  let meta: { tokens: string[]; merges: string[] };
  beforeAll(async () => {
    const coder = readFileSync(new URL('../../../fixtures/chat-templates/qwen3-coder.jinja', import.meta.url), 'utf8');
    const m = await tinyGgufModel({ layers: 1, seed: 1, fileType: 'Q8_0', tokenizer: 'tiny-bpe', chatTemplate: coder });
    const src = await resolveModelSource(m.path);
    tok = await Tokenizer.fromSource(src);
    const { cachedGgufModel } = await import('../../../../src/model/formats/gguf/gguf-read.ts');
    const model = await cachedGgufModel(src, src.modelFile!);
    meta = { tokens: model.metadata['tokenizer.ggml.tokens'] as string[], merges: model.metadata['tokenizer.ggml.merges'] as string[] };
  }, 180_000);

  it('is really built from the metadata: a few hundred ids, not Qwen\'s', () => {
    expect(tok.vocabSize).toBe(meta.tokens.length);
    expect(tok.vocabSize).toBeLessThan(1000);
    expect(tok.special.imEnd).toBe(meta.tokens.indexOf('<|im_end|>'));
    expect(tok.special.toolCall).toBe(meta.tokens.indexOf('<tool_call>'));
  });

  it('encodes the corpus like a naive BPE over the same merges, and decodes back', () => {
    const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>', '<think>', '</think>'];
    for (const t of corpus().filter((s) => s === s.normalize('NFC'))) {
      expect(tok.encode(t), JSON.stringify(t)).toEqual(naiveBpe(meta.tokens, meta.merges, specials, t));
      expect(tok.decode(tok.encode(t))).toBe(t);
    }
  });

  it('its Qwen3-Coder template is detected as the XML call format', () => {
    expect(ChatTemplate.fromTokenizerConfig(tok.config, 'gguf').format).toBe('xml');
  });
});
