// Issue 27, items 1–4: hostile GGUF files, as a room's host could name them for every guest. Each is built
// here byte by byte and read from a file and over HTTP (our Range server on 127.0.0.1): each fails with
// a named error, after reading at most the first 2 MiB step of the header, with at most a few requests,
// and under 64 MB of extra memory. Before the bounded parser they ran for 21 s to forever.
//
// The time limit asserted is a generous 5 s (a busy 2-core CI box; the real figures are milliseconds and
// are printed by `npm run fuzz -- --only gguf`); what the tests pin exactly is what cannot vary with load:
// bytes read, requests and probes made.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelConfig, parseHfConfig } from '../../../../src/model/config.ts';
import { ConfigError, HeaderError, ModelFileError, SplitPartMissingError, TruncatedFileError } from '../../../../src/model/errors.ts';
import { GGUF_LIMITS } from '../../../../src/model/formats/gguf/gguf-limits.ts';
import { HttpModelSource } from '../../../../src/model/sources/http.ts';
import { NodeFolderSource } from '../../../../src/model/sources/node-folder.ts';
import type { ModelSource } from '../../../../src/model/types.ts';
import { startRangeServer, type RangeServer } from '../../../helpers/range-server.ts';
import { concat, fixedHeader, gguf, kvArrayClaim, kvString, kvU32, kvU64, kvU8Array } from './hostile-bytes.ts';

const MiB = 2 ** 20;
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let dir: string;
let server: RangeServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gguf-hostile-'));
  server = await startRangeServer(dir);
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** A local source that counts what it is asked (bytes read, reads, existence probes). */
function counted(source: ModelSource): { source: ModelSource; bytes: () => number; probes: () => number } {
  let bytes = 0, probes = 0;
  const wrapped: ModelSource = {
    label: source.label, ...(source.modelFile ? { modelFile: source.modelFile } : {}),
    readFile: (p, o) => source.readFile(p, o),
    readRange: async (p, a, b) => { const r = await source.readRange(p, a, b); bytes += r.byteLength; return r; },
    exists: async (p) => { probes++; return source.exists(p); },
    size: (p) => source.size!(p),
  };
  return { source: wrapped, bytes: () => bytes, probes: () => probes };
}

interface Outcome { error: Error; ms: number; extraBytes: number; bytesRead: number; requests: number; probes: number }

/** Load the config of `file` (the first thing a guest does), timing it and sampling the heap while it runs. */
async function attempt(source: ModelSource, read: () => { bytes: number; requests: number; probes: number }): Promise<Outcome> {
  gc();
  const usage = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
  const base = usage();
  let peak = base;
  const sampler = setInterval(() => { peak = Math.max(peak, usage()); }, 2);
  const t0 = performance.now();
  let error: Error | undefined;
  try {
    await loadModelConfig(source);
  } catch (e) {
    error = e as Error;
  }
  const ms = performance.now() - t0;
  peak = Math.max(peak, usage());
  clearInterval(sampler);
  if (!error) throw new Error(`${source.label}: expected a failure, the config loaded`);
  const { bytes, requests, probes } = read();
  return { error, ms, extraBytes: peak - base, bytesRead: bytes, requests, probes };
}

/** The file written to disk, then read from the file and over HTTP: both outcomes. */
async function bothWays(name: string, bytes: Uint8Array): Promise<{ file: Outcome; http: Outcome }> {
  await writeFile(join(dir, name), bytes);
  const local = counted(new NodeFolderSource(dir, name));
  const file = await attempt(local.source, () => ({ bytes: local.bytes(), requests: 0, probes: local.probes() }));
  server.reset();
  const http = await attempt(new HttpModelSource(server.url, { modelFile: name, retries: 0 }),
    () => ({ bytes: server.totalBytesSent(), requests: server.requests.length, probes: server.requests.filter((r) => r.method === 'HEAD' && r.path !== name).length }));
  return { file, http };
}

function expectBounded(o: Outcome, maxBytesRead: number, maxMs = 5_000): void {
  expect(o.error).toBeInstanceOf(ModelFileError);
  expect(o.ms).toBeLessThan(maxMs);
  expect(o.extraBytes).toBeLessThan(64 * MiB);
  expect(o.bytesRead).toBeLessThanOrEqual(maxBytesRead);
}

// Each test below ran for 20 s to forever before the fix; 30 s lets it fail there rather than hang CI.
describe('issue 27 item 1: counts bounded by the bytes that can hold them', () => {
  it('a 24-byte GGUF claiming 10 million tensors: HeaderError at once, nothing past the 24 bytes read', async () => {
    const bytes = fixedHeader(10_000_000, 0);
    expect(bytes.byteLength).toBe(24);
    const { file, http } = await bothWays('ten-million.gguf', bytes);
    for (const o of [file, http]) {
      expectBounded(o, 24);
      expect(o.error).toBeInstanceOf(HeaderError);
      expect(o.error.message).toMatch(/ten-million\.gguf: tensor_count is 10000000, more than the 65536 .*\(limit tensors\)/);
    }
    expect(http.requests).toBeLessThanOrEqual(2);                                 // the size, then the first read
  }, 30_000);

  it('a count under the limit that the file cannot hold: TruncatedFileError from the count alone', async () => {
    const { file, http } = await bothWays('short.gguf', concat([fixedHeader(60_000, 0), new Uint8Array(1000)]));
    for (const o of [file, http]) {
      expectBounded(o, 1024);
      expect(o.error).toBeInstanceOf(TruncatedFileError);
      expect(o.error.message).toMatch(/claims 60000 tensors .* at least 1920024 bytes of header; the file is 1024 bytes/);
    }
  }, 30_000);

  it('an array claiming 2^40 elements, and a string 2^50 bytes long: refused before any allocation', async () => {
    const arr = await bothWays('array.gguf', gguf([kvArrayClaim('tokenizer.ggml.tokens', 8, 2 ** 40, new Uint8Array(64))]));
    const text = await bothWays('string.gguf', gguf([concat([kvString('general.name', 'x').subarray(0, 8 + 12 + 4), new Uint8Array(new BigUint64Array([2n ** 50n]).buffer)])]));
    for (const o of [arr.file, arr.http]) {
      expectBounded(o, 1024);
      expect(o.error.message).toMatch(/"tokenizer\.ggml\.tokens" has 1099511627776 elements, more than the 1048576/);
    }
    for (const o of [text.file, text.http]) {
      expectBounded(o, 1024);
      expect(o.error.message).toMatch(/is 1125899906842624 bytes long, more than 1048576/);
    }
  }, 30_000);
});

const moeHeader = (blocks: number | bigint, extra: Uint8Array[] = []) => gguf([
  kvString('general.architecture', 'qwen3moe'), kvU64('qwen3moe.block_count', blocks), kvU32('qwen3moe.embedding_length', 64),
  kvU32('qwen3moe.attention.head_count', 4), kvU32('qwen3moe.expert_count', 8), kvU32('qwen3moe.expert_used_count', 2),
  kvU32('qwen3moe.expert_feed_forward_length', 32), ...extra,
]);

describe('issue 27 item 2: every architecture number has an upper bound', () => {
  it('a qwen3moe header with block_count 2^52: ConfigError naming the key and the bound', async () => {
    const bytes = moeHeader(2n ** 52n);
    expect(bytes.byteLength).toBeLessThan(512);
    const { file, http } = await bothWays('blocks.gguf', bytes);
    for (const o of [file, http]) {
      expectBounded(o, bytes.byteLength);
      expect(o.error).toBeInstanceOf(ConfigError);
      expect(o.error.message).toMatch(/blocks\.gguf: GGUF metadata "qwen3moe\.block_count" is 4503599627370496, more than the 1024 pooled reads/);
    }
  }, 30_000);

  it.each([
    ['qwen3moe.embedding_length', 2 ** 31], ['qwen3moe.attention.head_count', 2 ** 30], ['qwen3moe.expert_count', 2 ** 32 - 1],
    ['qwen3moe.expert_feed_forward_length', 2 ** 40], ['qwen3moe.context_length', 2 ** 50], ['qwen3moe.attention.key_length', 2 ** 20],
  ])('%s = %i: ConfigError naming it', async (key, value) => {
    const kvs = [kvString('general.architecture', 'qwen3moe'), kvU64('qwen3moe.block_count', 2), kvU32('qwen3moe.embedding_length', 64),
      kvU32('qwen3moe.attention.head_count', 4), kvU32('qwen3moe.expert_count', 8), kvU32('qwen3moe.expert_used_count', 2),
      kvU32('qwen3moe.expert_feed_forward_length', 32), kvU32('qwen3moe.vocab_size', 100)].filter((kv) => !new TextDecoder().decode(kv).includes(key));
    const name = `${key}.gguf`;
    await writeFile(join(dir, name), gguf([...kvs, kvU64(key, value)]));
    const o = await attempt(new NodeFolderSource(dir, name), () => ({ bytes: 0, requests: 0, probes: 0 }));
    expect(o.error).toBeInstanceOf(ConfigError);
    expect(o.error.message).toContain(`"${key}" is ${value}, more than the`);
  }, 30_000);

  it('config.json too: num_hidden_layers 2^52 (Qwen3.5, whose layer types are a list per layer) is a ConfigError', () => {
    const json = { model_type: 'qwen3_5', text_config: { hidden_size: 64, num_hidden_layers: 2 ** 52, num_attention_heads: 4, rope_parameters: { rope_theta: 1e7 } } };
    expect(() => parseHfConfig(json)).toThrow(ConfigError);
    expect(() => parseHfConfig(json)).toThrow(/"num_hidden_layers" is 4503599627370496, more than the 1024 pooled reads/);
    expect(() => parseHfConfig({ model_type: 'qwen3', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, vocab_size: 2 ** 40, intermediate_size: 8 }))
      .toThrow(/"vocab_size" is 1099511627776/);
  });
});

describe('issue 27 item 3: metadata capped at what a real model needs', () => {
  it('one u8 array of 45 million elements (a 45 MB file): HeaderError from its count, 2 MiB read at most', async () => {
    const bytes = gguf([kvString('general.architecture', 'qwen3'), kvU8Array('junk', 45_000_000)]);
    const { file, http } = await bothWays('one-array.gguf', bytes);
    for (const o of [file, http]) {
      expectBounded(o, 2 * MiB);
      expect(o.error).toBeInstanceOf(HeaderError);
      expect(o.error.message).toMatch(/"junk" has 45000000 elements, more than the 1048576 .*\(limit arrayElements\)/);
    }
  }, 30_000);

  it('45 u8 arrays of a million elements each (45 MB): HeaderError once the metadata passes the total, after ≈2 MB', async () => {
    const arrays = Array.from({ length: 45 }, (_, i) => kvU8Array(`junk.${i}`, 1_000_000));
    const bytes = gguf([kvString('general.architecture', 'qwen3'), ...arrays]);
    expect(bytes.byteLength).toBeGreaterThan(45_000_000);
    const { file, http } = await bothWays('many-arrays.gguf', bytes);
    for (const o of [file, http]) {
      expectBounded(o, 4 * MiB);
      expect(o.error).toBeInstanceOf(HeaderError);
      expect(o.error.message).toMatch(/"junk\.1" brings the metadata to 2000000 array elements, more than 1048576 \(limit totalArrayElements\)/);
    }
  }, 30_000);

  it('a header longer than the limit (40 MB of 1 MB strings, each within its own bound): HeaderError at the limit', async () => {
    const big = 'x'.repeat(1 * MiB - 16);
    const bytes = gguf(Array.from({ length: 40 }, (_, i) => kvString(`general.note.${i}`, big)));
    const { file } = await bothWays('long-header.gguf', bytes);
    expectBounded(file, GGUF_LIMITS.headerBytes, 15_000);            // it reads the whole 24 MiB allowed, by design
    expect(file.error).toBeInstanceOf(HeaderError);
    expect(file.error.message).toMatch(/takes the header past 25165824 bytes.*\(limit headerBytes\)/);
  }, 30_000);
});

const splitFirst = (count: number) => gguf([kvString('general.architecture', 'qwen3'), kvU32('split.no', 0), kvU32('split.count', count), kvU32('split.tensors.count', 0)]);

describe('issue 27 item 4: split parts bounded, and the first missing part ends it', () => {
  it('split.count 99,999 in a 96-byte-sized first part: HeaderError, no part probed', async () => {
    const bytes = splitFirst(99_999);
    expect(bytes.byteLength).toBeLessThan(160);
    const { file, http } = await bothWays('m-00001-of-99999.gguf', bytes);
    for (const o of [file, http]) {
      expectBounded(o, bytes.byteLength);
      expect(o.error).toBeInstanceOf(HeaderError);
      expect(o.error.message).toMatch(/split\.count is 99999, more than the 256 parts .*\(limit splitParts\)/);
      expect(o.probes).toBe(0);
    }
  }, 30_000);

  it('split.count 200 with only part 1 present: SplitPartMissingError naming part 2 alone, after one probe', async () => {
    const bytes = splitFirst(200);
    const { file, http } = await bothWays('s-00001-of-00200.gguf', bytes);
    for (const o of [file, http]) {
      expectBounded(o, bytes.byteLength);
      expect(o.error).toBeInstanceOf(SplitPartMissingError);
      expect(o.error.message).toMatch(/^s-00002-of-00200\.gguf: split GGUF of 200 parts: part 2 \(s-00002-of-00200\.gguf\) is missing$/);
      expect(o.probes).toBe(1);
    }
    expect(http.requests).toBeLessThanOrEqual(4);
  }, 30_000);
});

describe('the bounded parser against an independent reader', () => {
  it('reads real GGUF files (Qwen3 vocabulary, MoE, split, hybrid) exactly as @huggingface/gguf does', async () => {
    const { gguf: libraryGguf } = await import('@huggingface/gguf');
    const { readGgufHeader } = await import('../../../../src/model/formats/gguf/gguf-read.ts');
    const { tinyGgufModel } = await import('../../../helpers/tiny-model.ts');
    const models = [
      await tinyGgufModel({ layers: 2, seed: 2, fileType: 'Q4_K_M' }),
      await tinyGgufModel({ layers: 2, fileType: 'Q4_K_M', moe: { experts: 4, topK: 2 }, tokenizer: 'tiny-bpe' }),
      await tinyGgufModel({ layers: 3, fileType: 'Q8_0', splits: 3, tokenizer: 'tiny-bpe' }),
      await tinyGgufModel({ layers: 2, fileType: 'Q8_0', hybrid: {}, tokenizer: 'tiny-bpe' }),
    ];
    const plain = (v: unknown): unknown => (typeof v === 'bigint' ? Number(v) : Array.isArray(v) ? v.map(plain) : v);
    for (const m of models) {
      const ours = await readGgufHeader(new NodeFolderSource(m.dir, m.file), m.file);
      const lib = await libraryGguf(m.path, { allowLocalFile: true });
      const { version, tensor_count: _t, kv_count: _k, ...libMeta } = lib.metadata as Record<string, unknown>;
      expect(ours.version).toBe(Number(version));
      expect(Object.keys(ours.metadata)).toEqual(Object.keys(libMeta));
      for (const [k, v] of Object.entries(libMeta)) expect(ours.metadata[k], k).toEqual(plain(v));
      expect(ours.dataStart).toBe(Number(lib.tensorDataOffset));
      expect(ours.tensors.map((t) => [t.name, t.ne, t.start - ours.dataStart]))
        .toEqual(lib.tensorInfos.map((t) => [t.name, t.shape.map(Number), Number(t.offset)]));
    }
  }, 240_000);  // four tiny models built on first use, the Qwen3 vocabulary (≈6 MB of header) parsed twice, a busy CI box
});
