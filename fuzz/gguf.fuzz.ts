// GGUF fuzz: model files as a hostile host could name them. Tiny GGUF models in the real layout (dense
// Q8_0, MoE Q4_K_M, a dense model split in 3 parts, a Qwen3.5 hybrid) get one mutation each: a field of
// the header (tensor_count, kv_count, a key or string length, a value type, an array's element type or
// count, a metadata value such as block_count or split.count, a tensor's n_dims, ne, type or offset) set
// to a hostile value, flipped bytes, a cut, appended bytes, a split part removed or swapped; or a file
// made from scratch whose counts lie. Then the header, metadata, config, tensor infos, split parts, the
// tokenizer's objects and the weights are read through an in-memory source. Each case must load or be
// refused with a named ModelFileError within its bounds: any other error is a crash; past the time bound
// (1 s, measured around the whole case, so a loop that blocks the event loop counts too) a hang; past
// the memory bound (64 MiB handed out by the source, or the heap 64 MiB larger after the case once
// collected) a crash. The run's peak RSS and slowest case are reported beside.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FileTooLongError, ModelFileError, ModelSourceError, TruncatedFileError } from '../src/model/errors.ts';
import { parseGgufConfig } from '../src/model/formats/gguf/gguf-config.ts';
import { cachedGgufModel } from '../src/model/formats/gguf/gguf-read.ts';
import { ggufTokenizerObjects } from '../src/model/formats/gguf/gguf-tokenizer.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { tinyBpeVocab } from '../src/model/tiny/gguf-vocab.ts';
import { tinyGgufFiles, type TinyGgufOptions } from '../src/model/tiny/tiny-gguf.ts';
import type { ModelSource, ReadFileOptions } from '../src/model/types.ts';
import { seededRandom } from '../src/room/fuzz.ts';
import { bounded, crashed, newReport, refusedWith, type FuzzReport } from './report.ts';

const MiB = 2 ** 20;
export interface GgufFuzzBounds { ms: number; bytes: number }
export const DEFAULT_BOUNDS: GgufFuzzBounds = { ms: 1_000, bytes: 64 * MiB };

/** An in-memory model folder that answers as the real sources do, counting the bytes it hands out. */
class MemorySource implements ModelSource {
  readonly label = 'fuzz';
  bytesOut = 0;
  constructor(private readonly files: Map<string, Uint8Array>, readonly modelFile: string, private readonly budget: number) {}
  private file(path: string): Uint8Array {
    const f = this.files.get(path);
    if (!f) throw new ModelSourceError('file not found', { file: path, status: 404 });
    return f;
  }
  private take(n: number, path: string): void {
    this.bytesOut += n;
    if (this.bytesOut > this.budget) throw new MemoryBoundError(`${path}: the case read more than ${this.budget} bytes`);
  }
  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const f = this.file(path);
    if (opts.maxBytes !== undefined && f.length > opts.maxBytes) throw new FileTooLongError(`is ${f.length} bytes`, { file: path }, opts.maxBytes);
    this.take(f.length, path);
    return f.slice();
  }
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const f = this.file(path);
    if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && 0 <= start && start <= end)) throw new RangeError(`bad byte range [${start}, ${end})`);
    if (end > f.length) throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is only ${f.length} bytes long`, { file: path, fileSize: f.length });
    this.take(end - start, path);
    return f.slice(start, end);
  }
  async exists(path: string): Promise<boolean> { return this.files.has(path); }
  async size(path: string): Promise<number> { return this.file(path).length; }
}

/** Not a ModelFileError: going past the memory bound is a failure of the case, not a refusal. */
class MemoryBoundError extends Error { override name = 'MemoryBoundError'; }

interface Base { files: Map<string, Uint8Array>; first: string }

function bases(): Base[] {
  const vocab = tinyBpeVocab('{{ messages }}', 60);
  const small: TinyGgufOptions = { layers: 2, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 64, seed: 3 };
  const make = (o: TinyGgufOptions): Base => {
    const files = tinyGgufFiles(o, vocab);
    return { files, first: [...files.keys()].sort()[0]! };
  };
  return [
    make({ ...small, fileType: 'Q8_0', name: 'dense' }),
    make({ ...small, fileType: 'Q4_K_M', headDim: 64, intermediate: 256, moe: { experts: 4, topK: 2, intermediate: 256 }, name: 'moe' }),
    make({ ...small, fileType: 'Q8_0', splits: 3, name: 'split' }),
    make({ ...small, fileType: 'Q8_0', headDim: 64, hybrid: {}, name: 'hybrid' }),
  ];
}

/** A header field a mutation can rewrite: where it is and how wide (4 or 8 bytes). */
interface Field { at: number; width: 4 | 8; what: string }

/** The header fields of a well-formed GGUF (the bases), found by walking it. */
function fields(b: Uint8Array): Field[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: Field[] = [{ at: 4, width: 4, what: 'version' }, { at: 8, width: 8, what: 'tensor_count' }, { at: 16, width: 8, what: 'kv_count' }];
  let pos = 24;
  const u64 = () => { const x = Number(v.getBigUint64(pos, true)); pos += 8; return x; };
  const string = (what: string) => { out.push({ at: pos, width: 8, what }); const len = u64(); pos += len; };
  const size: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const kvs = Number(v.getBigUint64(16, true)), tensors = Number(v.getBigUint64(8, true));
  for (let i = 0; i < kvs; i++) {
    string('key length');
    out.push({ at: pos, width: 4, what: 'value type' });
    const type = v.getUint32(pos, true); pos += 4;
    if (type === 8) string('string length');
    else if (type === 9) {
      out.push({ at: pos, width: 4, what: 'element type' });
      const of = v.getUint32(pos, true); pos += 4;
      out.push({ at: pos, width: 8, what: 'element count' });
      const n = u64();
      for (let j = 0; j < n; j++) {
        if (of === 8) { if (j < 2 || j === n - 1) string('element length'); else { const len = Number(v.getBigUint64(pos, true)); pos += 8 + len; } } else pos += size[of]!;
      }
    } else {
      const w = size[type]!;
      if (w >= 4) out.push({ at: pos, width: w as 4 | 8, what: 'value' });
      pos += w;
    }
  }
  for (let i = 0; i < tensors; i++) {
    string('tensor name length');
    out.push({ at: pos, width: 4, what: 'n_dims' });
    const dims = v.getUint32(pos, true); pos += 4;
    for (let d = 0; d < dims; d++) { out.push({ at: pos, width: 8, what: 'ne' }); pos += 8; }
    out.push({ at: pos, width: 4, what: 'tensor type' }); pos += 4;
    out.push({ at: pos, width: 8, what: 'tensor offset' }); pos += 8;
  }
  return out;
}

const HOSTILE = [0n, 1n, 2n, 3n, 7n, 8n, 9n, 13n, 63n, 64n, 255n, 256n, 4096n, 65_535n, 65_536n, 65_537n, 99_999n, 1_000_000n, 10_000_000n,
  2n ** 20n + 1n, 2n ** 24n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 40n, 2n ** 52n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n];

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

function mutateField(b: Uint8Array, f: Field, rand: () => number): Uint8Array {
  const out = b.slice();
  const v = new DataView(out.buffer);
  const old = f.width === 8 ? v.getBigUint64(f.at, true) : BigInt(v.getUint32(f.at, true));
  const roll = rand();
  let x = roll < 0.6 ? pick(rand, HOSTILE) : roll < 0.8 ? old + BigInt(Math.floor(rand() * 5) - 2) : old * BigInt(2 + Math.floor(rand() * 1000));
  if (x < 0n) x = 0n;
  if (f.width === 8) v.setBigUint64(f.at, BigInt.asUintN(64, x), true);
  else v.setUint32(f.at, Number(BigInt.asUintN(32, x)), true);
  return out;
}

function mutateBytes(b: Uint8Array, rand: () => number, headerEnd: number): Uint8Array {
  const roll = rand();
  const at = () => Math.floor(rand() * (rand() < 0.8 ? headerEnd : b.length));
  if (roll < 0.35) return b.slice(0, at());
  if (roll < 0.8) {
    const out = b.slice();
    for (let k = 0; k < 1 + rand() * 8; k++) out[at()] ^= 1 << Math.floor(rand() * 8);
    return out;
  }
  const out = new Uint8Array(b.length + 1 + Math.floor(rand() * 256));
  out.set(b);
  for (let i = b.length; i < out.length; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

/** A GGUF from nothing: the fixed header with lying counts, then a little of something. */
function fromScratch(rand: () => number): Uint8Array {
  const body = Math.floor(rand() * 512);
  const out = new Uint8Array(24 + body);
  const v = new DataView(out.buffer);
  out.set([0x47, 0x47, 0x55, 0x46]);
  v.setUint32(4, rand() < 0.9 ? 3 : Math.floor(rand() * 5), true);
  v.setBigUint64(8, BigInt.asUintN(64, pick(rand, HOSTILE)), true);
  v.setBigUint64(16, BigInt.asUintN(64, pick(rand, HOSTILE)), true);
  // A plausible first key/value (a key, then an array or a string with a lying count), or random bytes.
  let pos = 24;
  if (body >= 40 && rand() < 0.7) {
    const key = new TextEncoder().encode(pick(rand, ['tokenizer.ggml.tokens', 'qwen3moe.block_count', 'split.count', 'general.architecture']));
    v.setBigUint64(pos, BigInt(key.length), true); out.set(key, pos + 8); pos += 8 + key.length;
    v.setUint32(pos, pick(rand, [8, 9, 10, 4, 13]), true); pos += 4;
    if (pos + 12 <= out.length) { v.setUint32(pos, pick(rand, [0, 8, 9, 10, 12]), true); v.setBigUint64(pos + 4, BigInt.asUintN(64, pick(rand, HOSTILE)), true); pos += 12; }
  }
  for (let i = pos; i < out.length; i++) out[i] = rand() < 0.5 ? 0 : Math.floor(rand() * 256);
  return out;
}

function mutate(base: Base, rand: () => number, layouts: Map<string, Field[]>): { files: Map<string, Uint8Array>; first: string } {
  const files = new Map(base.files);
  const names = [...files.keys()].sort();
  const roll = rand();
  if (roll < 0.08) return { files: new Map([[base.first, fromScratch(rand)]]), first: base.first };
  if (names.length > 1 && roll < 0.14) {
    if (rand() < 0.5) files.delete(pick(rand, names.slice(1)));
    else { const [a, b] = [pick(rand, names), pick(rand, names)]; files.set(a, base.files.get(b)!); files.set(b, base.files.get(a)!); }
    return { files, first: base.first };
  }
  const name = pick(rand, names);
  const bytes = files.get(name)!;
  const layout = layouts.get(`${base.first}/${name}`)!;
  const headerEnd = layout.at(-1)!.at + 8;
  files.set(name, roll < 0.7 ? mutateField(bytes, pick(rand, layout), rand) : mutateBytes(bytes, rand, headerEnd));
  return { files, first: base.first };
}

/** One case: header → config → tokenizer objects → weights, as a guest would read them. */
async function readModel(src: MemorySource): Promise<void> {
  const model = await cachedGgufModel(src, src.modelFile);
  const config = parseGgufConfig(model);
  ggufTokenizerObjects(model.metadata, src.modelFile);
  await loadWeights(src, { layers: [0, config.numLayers], embedding: true, head: true });
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };

export interface GgufFuzzReport extends FuzzReport { slowestMs: number; peakRssMb: number; maxHeldMb: number }

export async function run(seed: number, count: number, bounds: GgufFuzzBounds = DEFAULT_BOUNDS): Promise<GgufFuzzReport> {
  const report: GgufFuzzReport = { ...newReport('gguf', seed), slowestMs: 0, peakRssMb: 0, maxHeldMb: 0 };
  const t0 = performance.now();
  const rand = seededRandom(seed * 7_919 + 11);
  const models = bases();
  const layouts = new Map<string, Field[]>();
  for (const m of models) for (const [name, bytes] of m.files) layouts.set(`${m.first}/${name}`, fields(bytes));
  gc();
  let baseline = heap();
  for (let n = 0; n < count; n++) {
    report.cases++;
    const base = models[Math.floor(rand() * models.length)]!;
    const { files, first } = rand() < 0.03 ? base : mutate(base, rand, layouts);
    const src = new MemorySource(files, first, bounds.bytes);
    const started = performance.now();
    try {
      const out = await bounded(readModel(src), bounds.ms * 10);
      if (out === 'hang') report.hangs.push({ case: n, what: `did not settle in ${bounds.ms * 10} ms` });
      else report.accepted++;
    } catch (e) {
      if (e instanceof ModelFileError) refusedWith(report, e);
      else crashed(report, n, e);
    }
    const ms = performance.now() - started;
    report.slowestMs = Math.max(report.slowestMs, ms);
    if (ms > bounds.ms && !report.hangs.some((h) => h.case === n)) report.hangs.push({ case: n, what: `took ${ms.toFixed(0)} ms, more than ${bounds.ms}` });
    // Heap the case left held (a cache or a leak): measured, after a collection, only when the cheap
    // reading says it may be past the bound. What a case uses while it runs is bounded by the bytes
    // the source hands out (above) and by the parser's own limits.
    if (heap() - baseline > bounds.bytes) {
      gc();
      const now = heap() - baseline;
      report.maxHeldMb = Math.max(report.maxHeldMb, now / MiB);
      if (now > bounds.bytes) { crashed(report, n, new MemoryBoundError(`the heap grew by ${(now / MiB).toFixed(1)} MiB over the case, once collected`)); baseline = heap(); }
    }
  }
  report.ms = performance.now() - t0;
  report.peakRssMb = process.resourceUsage().maxRSS / 1024;
  return report;
}
