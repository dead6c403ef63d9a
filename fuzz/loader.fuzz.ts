// Loader fuzz: model folders as a broken download, a lying mirror or a hand edit leaves them. Tiny
// checkpoints in the real formats (safetensors, safetensors sharded with an index, MLC q4f16_1) get one
// of their files mutated: JSON structure (config.json, tensor-cache.json, the index, the safetensors
// header, re-packed or with a lying length prefix), truncation, flipped or appended bytes, or a file
// removed. loadWeights must then load (the mutation was harmless) or refuse with a named ModelFileError
// (HeaderError, TensorOffsetError, ShardSizeError, ConfigError, ...); any other error, or a load past
// its time bound, is a crash or a hang.
import { FileTooLongError, ModelFileError, ModelSourceError, TruncatedFileError } from '../src/model/errors.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { tinyMlcFiles, tinySafetensorsFiles, type TinyModelOptions } from '../src/model/tiny/tiny-model.ts';
import type { ModelSource, ReadFileOptions } from '../src/model/types.ts';
import { seededRandom } from '../src/room/fuzz.ts';
import { mutateJson, type Json } from './json-mutate.ts';
import { bounded, crashed, newReport, refusedWith, type FuzzReport } from './report.ts';

/** A model folder in memory that answers like the real sources do (named errors for missing or short files). */
class MemoryModelSource implements ModelSource {
  readonly label = 'fuzz';
  constructor(private readonly files: Map<string, Uint8Array>) {}
  private file(path: string): Uint8Array {
    const f = this.files.get(path);
    if (!f) throw new ModelSourceError('file not found', { file: path });
    return f;
  }
  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const f = this.file(path);
    if (opts.maxBytes !== undefined && f.length > opts.maxBytes) throw new FileTooLongError(`is ${f.length} bytes`, { file: path }, opts.maxBytes);
    return f.slice();
  }
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const f = this.file(path);
    if (end > f.length) throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is only ${f.length} bytes long`, { file: path });
    return f.slice(start, end);
  }
  async exists(path: string): Promise<boolean> { return this.files.has(path); }
}

const TINY: TinyModelOptions = { layers: 2, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, vocab: 512, seed: 5 };
const NO_TOKENIZER = { 'tokenizer.json': new Uint8Array(0), 'tokenizer_config.json': new Uint8Array(0) };
const enc = new TextEncoder();
const dec = new TextDecoder();

function bases(): Map<string, Uint8Array>[] {
  return [
    tinySafetensorsFiles(TINY, NO_TOKENIZER),
    tinySafetensorsFiles({ ...TINY, shards: 2 }, NO_TOKENIZER),
    tinyMlcFiles({ ...TINY, shards: 2 }, NO_TOKENIZER),
  ];
}

function mutateSafetensors(bytes: Uint8Array, rand: () => number): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  const roll = rand();
  if (roll < 0.45) {
    // The header's JSON, mutated and re-packed (a valid length prefix, an untrustworthy header).
    const header = JSON.parse(dec.decode(bytes.subarray(8, 8 + headerLen))) as Json;
    const text = enc.encode(JSON.stringify(mutateJson(header, rand)));
    const out = new Uint8Array(8 + text.length + (bytes.length - 8 - headerLen));
    new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
    out.set(text, 8);
    out.set(bytes.subarray(8 + headerLen), 8 + text.length);
    return out;
  }
  const out = bytes.slice();
  if (roll < 0.6) {
    const lies = [0n, 1n, 7n, BigInt(headerLen - 1), BigInt(headerLen + 1), BigInt(bytes.length), 2n ** 32n, 2n ** 53n, 2n ** 64n - 1n];
    new DataView(out.buffer).setBigUint64(0, lies[Math.floor(rand() * lies.length)]!, true);
    return out;
  }
  return mutateBytes(out, rand);
}

function mutateBytes(bytes: Uint8Array, rand: () => number): Uint8Array {
  const roll = rand();
  if (roll < 0.4) return bytes.slice(0, Math.floor(rand() * bytes.length));
  if (roll < 0.8) {
    const out = bytes.slice();
    for (let k = 0; k < 1 + rand() * 8; k++) out[Math.floor(rand() * out.length)] ^= 1 << Math.floor(rand() * 8);
    return out;
  }
  const out = new Uint8Array(bytes.length + 1 + Math.floor(rand() * 64));
  out.set(bytes);
  return out;
}

function mutateFolder(files: Map<string, Uint8Array>, rand: () => number): Map<string, Uint8Array> {
  const out = new Map(files);
  const names = [...out.keys()].filter((n) => !n.startsWith('tokenizer'));
  const name = names[Math.floor(rand() * names.length)]!;
  const bytes = out.get(name)!;
  if (rand() < 0.05) { out.delete(name); return out; }
  if (name.endsWith('.json')) {
    out.set(name, rand() < 0.8 ? enc.encode(JSON.stringify(mutateJson(JSON.parse(dec.decode(bytes)) as Json, rand))) : mutateBytes(bytes, rand));
  } else if (name.endsWith('.safetensors')) {
    out.set(name, mutateSafetensors(bytes, rand));
  } else {
    out.set(name, mutateBytes(bytes, rand));
  }
  return out;
}

export async function run(seed: number, count: number): Promise<FuzzReport> {
  const report = newReport('loader', seed);
  const t0 = performance.now();
  const rand = seededRandom(seed * 104_729 + 3);
  const models = bases();
  for (let n = 0; n < count; n++) {
    report.cases++;
    const files = rand() < 0.05 ? models[n % models.length]! : mutateFolder(models[Math.floor(rand() * models.length)]!, rand);
    const layers: [number, number] = rand() < 0.5 ? [0, 2] : [1, 2];
    const load = loadWeights(new MemoryModelSource(files), { layers, embedding: layers[0] === 0, head: true });
    try {
      const out = await bounded(load, 10_000);
      if (out === 'hang') report.hangs.push({ case: n, what: 'loadWeights did not settle in 10 s' });
      else report.accepted++;
    } catch (e) {
      if (e instanceof ModelFileError) refusedWith(report, e);
      else crashed(report, n, e);
    }
  }
  report.ms = performance.now() - t0;
  return report;
}
