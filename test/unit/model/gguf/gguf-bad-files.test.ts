// Bad GGUF files are refused with named errors, before any weight data is read: unknown architecture,
// a tensor type we cannot read (named), a tensor shape that contradicts the metadata, a truncated file,
// data offsets past the end, and (in gguf-loading.test.ts) a split GGUF with a part missing.
import { describe, expect, it } from 'vitest';
import {
  HeaderError, ShapeMismatchError, TensorOffsetError, TruncatedFileError, UnsupportedArchitectureError, UnsupportedTensorTypeError,
  UnsupportedTokenizerError,
} from '../../../../src/model/errors.ts';
import { loadModelConfig } from '../../../../src/model/config.ts';
import { loadWeights } from '../../../../src/model/load-weights.ts';
import { Tokenizer } from '../../../../src/model/tokenizer.ts';
import { tinyBpeVocab } from '../../../../src/model/tiny/gguf-vocab.ts';
import { tinyGgufFiles } from '../../../../src/model/tiny/tiny-gguf.ts';
import type { ModelSource } from '../../../../src/model/types.ts';
import { TruncatedFileError as Truncated } from '../../../../src/model/errors.ts';

const FILE = 'm.gguf';
const good = (): Uint8Array => [...tinyGgufFiles({ layers: 2, hidden: 64, headDim: 16, intermediate: 64, fileType: 'Q8_0', name: 'm' },
  tinyBpeVocab('{{ messages }}', 60)).values()][0]!;

/** An in-memory source over one file's bytes. */
function memory(bytes: Uint8Array): ModelSource {
  return {
    label: 'memory', modelFile: FILE,
    async readFile() { return bytes; },
    async readRange(_p, a, b) {
      if (b > bytes.length) throw new Truncated(`needs [${a}, ${b})`, { file: FILE, fileSize: bytes.length });
      return bytes.slice(a, b);
    },
    async exists(p) { return p === FILE; },
    async size() { return bytes.length; },
  };
}

const enc = new TextEncoder();
/** Offset just after the length-prefixed string `s` (a metadata key or tensor name) in `b`. */
function after(b: Uint8Array, s: string): number {
  const needle = enc.encode(s);
  const len = new Uint8Array(8);
  new DataView(len.buffer).setBigUint64(0, BigInt(needle.length), true);
  const full = new Uint8Array([...len, ...needle]);
  outer: for (let i = 0; i + full.length <= b.length; i++) {
    for (let j = 0; j < full.length; j++) if (b[i + j] !== full[j]) continue outer;
    return i + full.length;
  }
  throw new Error(`"${s}" not found`);
}

async function failure(bytes: Uint8Array, what: 'config' | 'weights' | 'tokenizer' = 'weights'): Promise<Error> {
  const src = memory(bytes);
  try {
    if (what === 'config') await loadModelConfig(src);
    else if (what === 'tokenizer') await Tokenizer.fromSource(src);
    else await loadWeights(src, { layers: [0, 2], embedding: true, head: true });
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

describe('bad GGUF files', () => {
  it('the good file loads (so each failure below is the one change)', async () => {
    const w = await loadWeights(memory(good()), { layers: [0, 2], embedding: true, head: true });
    expect(w.format).toBe('gguf');
  });

  it('a source that cannot tell sizes still works: the length comes from its truncation error', async () => {
    const { size: _drop, ...noSize } = memory(good());
    void _drop;
    const w = await loadWeights(noSize as ModelSource, { layers: [0, 2], embedding: true, head: true });
    expect(w.layers.size).toBe(2);
  });

  it('unknown architecture: UnsupportedArchitectureError naming it', async () => {
    const b = good();
    const at = after(b, 'general.architecture') + 4 + 8;       // value type, string length
    b.set(enc.encode('llama'), at);                             // "qwen3" → "llama"
    const err = await failure(b, 'config');
    expect(err).toBeInstanceOf(UnsupportedArchitectureError);
    expect((err as UnsupportedArchitectureError).architecture).toBe('llama');
  });

  it('a tensor in a type we cannot read: UnsupportedTensorTypeError naming tensor and type', async () => {
    const b = good();
    const at = after(b, 'blk.1.attn_q.weight') + 4 + 2 * 8;     // n_dims, ne[0], ne[1], then the type
    new DataView(b.buffer).setUint32(at, 11, true);             // Q3_K
    const err = await failure(b);
    expect(err).toBeInstanceOf(UnsupportedTensorTypeError);
    expect(err.message).toMatch(/blk\.1\.attn_q\.weight.*ggml type Q3_K is not supported/);
  });

  it('a shape the metadata contradicts: ShapeMismatchError', async () => {
    const b = good();
    const at = after(b, 'qwen3.attention.head_count') + 4;
    new DataView(b.buffer).setUint32(at, 8, true);              // 4 heads → 8: attn_q should be [64, 128]
    const err = await failure(b);
    expect(err).toBeInstanceOf(ShapeMismatchError);
    expect(err.message).toMatch(/blk\.0\.attn_q\.weight.*ne \[64, 64\] but the GGUF metadata implies \[64, 128\]/);
  });

  it('a truncated file: TruncatedFileError naming the first tensor cut off', async () => {
    const b = good();
    const err = await failure(b.subarray(0, b.length - 4000), 'config');
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect((err as TruncatedFileError).tensor).toBeDefined();
    const header = await failure(b.subarray(0, 3000), 'config');  // inside the vocabulary
    expect(header).toBeInstanceOf(TruncatedFileError);
    expect(header.message).toMatch(/header runs past the end/);
  });

  it('a data offset past the end: TensorOffsetError', async () => {
    const b = good();
    const at = after(b, 'blk.1.ffn_up.weight') + 4 + 2 * 8 + 4;
    new DataView(b.buffer).setBigUint64(at, 1n << 40n, true);
    const err = await failure(b, 'config');
    expect(err).toBeInstanceOf(TensorOffsetError);
    expect(err.message).toMatch(/blk\.1\.ffn_up\.weight.*data offset 1099511627776/);
  });

  it('not a GGUF at all: HeaderError', async () => {
    const b = good();
    b.set(enc.encode('GGML'), 0);
    expect(await failure(b, 'config')).toBeInstanceOf(HeaderError);
  });

  it('a tokenizer we cannot build: UnsupportedTokenizerError naming the pre-tokenizer', async () => {
    const b = good();
    const at = after(b, 'tokenizer.ggml.pre') + 4 + 8;
    b.set(enc.encode('zzzzz'), at);                             // "gpt-2" → "zzzzz"
    const err = await failure(b, 'tokenizer');
    expect(err).toBeInstanceOf(UnsupportedTokenizerError);
    expect(err.message).toMatch(/pre-tokenizer "zzzzz" is not supported/);
  });
});
