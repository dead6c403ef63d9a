// Load the tensors one device needs (a layer range, maybe the embedding and the head) from any
// ModelSource, in either format, as canonical LayerWeights. Reads are ranged: only the requested
// tensors' bytes plus headers/index (MLC: the shards holding them, whole, so size and md5 are checked).
// Every shape is checked against the config before any data is read. Complete or throws.

import { readModelConfig, type ConfigFileName } from './config.ts';
import {
  ChecksumError, ShapeMismatchError, ShardSizeError, TruncatedFileError, UnknownFormatError, UnsupportedDTypeError,
} from './errors.ts';
import type { TensorCatalogue, TensorEntry } from './formats/catalogue.ts';
import { md5Hex } from './formats/md5.ts';
import { findMlcCacheFile, openMlc } from './formats/mlc.ts';
import { HF, MLC, layerShapes, type LinearSpec } from './formats/qwen3-names.ts';
import { openSafetensors, SAFETENSORS_FILE, SAFETENSORS_INDEX } from './formats/safetensors.ts';
import { toFloat32 } from './tensor-utils.ts';
import type {
  LayerWeights, Linear, LoadProgress, ModelConfig, ModelSource, ModelWeights, StoredDType, TensorData, WeightRequest,
} from './types.ts';

export interface PlannedRead {
  file: string;
  start: number;               // [start, end) in file
  end: number;
  whole: boolean;              // an MLC shard read whole and verified (size, md5)
  tensors: string[];           // tensors inside this read
}

/** What loading a request costs, computed from config + headers only (the room uses this to plan). */
export interface WeightPlan {
  config: ModelConfig;
  format: 'safetensors' | 'mlc';
  reads: PlannedRead[];
  dataBytes: number;           // sum of reads
  metadataBytes: number;       // config, index and header bytes read to make the plan
  tensorCount: number;
}

export interface LoadOptions {
  /** Parallel reads (default 4). */
  concurrency?: number;
  /** MLC: read shards whole and check size + md5 (default true). false: ranged reads, size checks only. */
  verifyMlcShards?: boolean;
  /** Largest merged safetensors read in bytes (default 64 MiB). */
  maxReadBytes?: number;
}

// ---- what a request needs, per format -------------------------------------------------------------

type LinearNeed =
  | { kind: 'dense'; label: string; names: string[]; parts: LinearSpec[] }    // row blocks stacked in order
  | { kind: 'q4'; prefix: string; spec: LinearSpec };
interface NormNeed { name: string; size: number }
interface LayerNeed {
  index: number; inputNorm: NormNeed; qkv: LinearNeed; qNorm: NormNeed; kNorm: NormNeed;
  o: LinearNeed; postNorm: NormNeed; gateUp: LinearNeed; down: LinearNeed;
}
interface Needs { layers: LayerNeed[]; embedding?: LinearNeed; finalNorm?: NormNeed; lmHead?: LinearNeed }
interface Expect { shape: number[]; dtypes: readonly StoredDType[] }

const FLOATS: readonly StoredDType[] = ['BF16', 'F16', 'F32'];

function needsFor(format: 'safetensors' | 'mlc', c: ModelConfig, req: WeightRequest): Needs {
  const s = layerShapes(c);
  const H = c.hiddenSize;
  const vocab = { rows: c.vocabSize, cols: H };
  const dense = (label: string, names: string[], parts: LinearSpec[]): LinearNeed => ({ kind: 'dense', label, names, parts });
  const q4 = (prefix: string, spec: LinearSpec): LinearNeed => ({ kind: 'q4', prefix, spec });
  const hf = format === 'safetensors';
  const layers: LayerNeed[] = [];
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    layers.push({
      index: i,
      inputNorm: { name: HF.inputNorm(i), size: H },
      postNorm: { name: HF.postNorm(i), size: H },
      qNorm: { name: HF.qNorm(i), size: c.headDim },
      kNorm: { name: HF.kNorm(i), size: c.headDim },
      qkv: hf ? dense(`model.layers.${i}.self_attn.{q,k,v}_proj.weight`, [HF.proj(i, 'q'), HF.proj(i, 'k'), HF.proj(i, 'v')], [s.q, s.k, s.v])
        : q4(MLC.qkv(i), s.qkv),
      o: hf ? dense(HF.proj(i, 'o'), [HF.proj(i, 'o')], [s.o]) : q4(MLC.o(i), s.o),
      gateUp: hf ? dense(`model.layers.${i}.mlp.{gate,up}_proj.weight`, [HF.mlp(i, 'gate'), HF.mlp(i, 'up')], [s.gate, s.up])
        : q4(MLC.gateUp(i), s.gateUp),
      down: hf ? dense(HF.mlp(i, 'down'), [HF.mlp(i, 'down')], [s.down]) : q4(MLC.down(i), s.down),
    });
  }
  const needs: Needs = { layers };
  if (req.embedding || (req.head && c.tieWordEmbeddings)) {
    needs.embedding = hf ? dense(HF.embedding, [HF.embedding], [vocab]) : q4(MLC.embedding, vocab);
  }
  if (req.head) {
    needs.finalNorm = { name: HF.finalNorm, size: H };
    if (!c.tieWordEmbeddings) needs.lmHead = hf ? dense(HF.lmHead, [HF.lmHead], [vocab]) : q4(MLC.lmHead, vocab);
  }
  return needs;
}

function expectations(needs: Needs): Map<string, Expect> {
  const out = new Map<string, Expect>();
  const norm = (n: NormNeed) => out.set(n.name, { shape: [n.size], dtypes: FLOATS });
  const linear = (l: LinearNeed) => {
    if (l.kind === 'dense') l.names.forEach((name, j) => out.set(name, { shape: [l.parts[j]!.rows, l.parts[j]!.cols], dtypes: FLOATS }));
    else {
      out.set(`${l.prefix}.q_weight`, { shape: [l.spec.rows, l.spec.cols / 8], dtypes: ['U32'] });
      out.set(`${l.prefix}.q_scale`, { shape: [l.spec.rows, l.spec.cols / 32], dtypes: ['F16'] });
    }
  };
  for (const l of needs.layers) {
    [l.inputNorm, l.postNorm, l.qNorm, l.kNorm].forEach(norm);
    [l.qkv, l.o, l.gateUp, l.down].forEach(linear);
  }
  if (needs.embedding) linear(needs.embedding);
  if (needs.finalNorm) norm(needs.finalNorm);
  if (needs.lmHead) linear(needs.lmHead);
  return out;
}

// ---- planning --------------------------------------------------------------------------------------

interface Prepared {
  plan: WeightPlan;
  catalogue: TensorCatalogue;
  needs: Needs;
  entries: Map<string, TensorEntry>;
}

async function detectFormat(source: ModelSource): Promise<'safetensors' | 'mlc'> {
  if ((await source.exists(SAFETENSORS_INDEX)) || (await source.exists(SAFETENSORS_FILE))) return 'safetensors';
  if (await findMlcCacheFile(source)) return 'mlc';
  throw new UnknownFormatError(
    `no weights found: expected ${SAFETENSORS_FILE}, ${SAFETENSORS_INDEX}, tensor-cache.json or ndarray-cache.json`,
    { file: source.label });
}

function checkRequest(c: ModelConfig, req: WeightRequest): void {
  const [a, b] = req.layers;
  if (!(Number.isInteger(a) && Number.isInteger(b) && 0 <= a && a <= b && b <= c.numLayers)) {
    throw new RangeError(`layer range [${a}, ${b}) is outside the model's ${c.numLayers} layers`);
  }
}

function checkShapes(entries: Map<string, TensorEntry>, expect: Map<string, Expect>, configFile: ConfigFileName): void {
  for (const [name, want] of expect) {
    const e = entries.get(name)!;
    if (e.shape.length !== want.shape.length || e.shape.some((d, i) => d !== want.shape[i])) {
      throw new ShapeMismatchError(`shape [${e.shape.join(', ')}] but ${configFile} implies [${want.shape.join(', ')}]`,
        { file: e.file, tensor: name });
    }
    if (!want.dtypes.includes(e.dtype)) {
      throw new UnsupportedDTypeError(`dtype ${e.dtype} where ${want.dtypes.join(' or ')} is expected`, { file: e.file, tensor: name });
    }
  }
}

function planReads(catalogue: TensorCatalogue, entries: TensorEntry[], opts: LoadOptions): PlannedRead[] {
  if (catalogue.wholeFiles && opts.verifyMlcShards !== false) {
    const byFile = new Map<string, string[]>();
    for (const e of entries) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e.name]);
    return [...byFile].map(([file, tensors]) => ({ file, start: 0, end: catalogue.wholeFiles!.get(file)!.nbytes, whole: true, tensors }));
  }
  // Ranged: sort by position, merge tensors that touch into one read (up to maxReadBytes).
  const maxBytes = opts.maxReadBytes ?? 64 * 1024 * 1024;
  const sorted = [...entries].sort((x, y) => (x.file < y.file ? -1 : x.file > y.file ? 1 : x.start - y.start));
  const reads: PlannedRead[] = [];
  for (const e of sorted) {
    const last = reads[reads.length - 1];
    if (last && last.file === e.file && last.end === e.start && e.end - last.start <= maxBytes) {
      last.end = e.end;
      last.tensors.push(e.name);
    } else {
      reads.push({ file: e.file, start: e.start, end: e.end, whole: false, tensors: [e.name] });
    }
  }
  return reads;
}

async function prepare(source: ModelSource, req: WeightRequest, opts: LoadOptions): Promise<Prepared> {
  const { config, file: configFile, bytes: configBytes } = await readModelConfig(source);
  checkRequest(config, req);
  const format = await detectFormat(source);
  const needs = needsFor(format, config, req);
  const expect = expectations(needs);
  const names = [...expect.keys()];
  const catalogue = format === 'safetensors' ? await openSafetensors(source, names) : await openMlc(source, names);
  const entries = new Map(names.map((n) => [n, catalogue.tensors.get(n)!]));
  checkShapes(entries, expect, configFile);
  const reads = planReads(catalogue, [...entries.values()], opts);
  const plan: WeightPlan = {
    config, format, reads,
    dataBytes: reads.reduce((a, r) => a + (r.end - r.start), 0),
    metadataBytes: configBytes + catalogue.metadataReads.reduce((a, m) => a + m.bytes, 0),
    tensorCount: names.length,
  };
  return { plan, catalogue, needs, entries };
}

/** The byte ranges a request needs, without reading any weight data. */
export async function planWeights(source: ModelSource, req: WeightRequest, opts: LoadOptions = {}): Promise<WeightPlan> {
  return (await prepare(source, req, opts)).plan;
}

// ---- reading ---------------------------------------------------------------------------------------

async function readPlanned(source: ModelSource, read: PlannedRead, p: Prepared): Promise<Uint8Array> {
  if (read.whole) {
    const record = p.catalogue.wholeFiles!.get(read.file)!;
    const bytes = await source.readFile(read.file);
    const cacheFile = p.catalogue.metadataReads[0]!.file;
    if (bytes.byteLength !== record.nbytes) {
      throw new ShardSizeError(`is ${bytes.byteLength} bytes but ${cacheFile} records ${record.nbytes}`, { file: read.file });
    }
    if (record.md5) {
      const got = md5Hex(bytes);
      if (got !== record.md5) throw new ChecksumError(`md5 ${got} but ${cacheFile} records ${record.md5}`, { file: read.file });
    }
    return bytes;
  }
  try {
    return await source.readRange(read.file, read.start, read.end);
  } catch (e) {
    if (!(e instanceof TruncatedFileError) || e.tensor) throw e;
    // Name the first tensor that the file cuts off.
    for (const name of read.tensors) {
      const t = p.entries.get(name)!;
      try {
        await source.readRange(t.file, t.start, t.end);
      } catch (inner) {
        if (inner instanceof TruncatedFileError) {
          throw new TruncatedFileError(`the file ends inside this tensor's bytes [${t.start}, ${t.end})`, { file: t.file, tensor: name, cause: inner });
        }
        throw inner;
      }
    }
    throw e;
  }
}

async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;                        // after one failure, start no further reads
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (!failed && next < items.length) {
      try {
        await work(items[next++]!);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  });
  await Promise.all(runners);
}

// ---- assembling canonical weights ------------------------------------------------------------------

function concatRows(label: string, parts: TensorData[], rows: number, cols: number): TensorData {
  const dtype = parts[0]!.dtype;
  if (parts.every((t) => t.dtype === dtype)) {
    const bytes = new Uint8Array(parts.reduce((a, t) => a + t.bytes.byteLength, 0));
    let o = 0;
    for (const t of parts) { bytes.set(t.bytes, o); o += t.bytes.byteLength; }
    return { name: label, dtype, shape: [rows, cols], bytes };
  }
  const f = new Float32Array(rows * cols);   // mixed dtypes (unusual): widen to F32
  let o = 0;
  for (const t of parts) { const v = toFloat32(t); f.set(v, o); o += v.length; }
  return { name: label, dtype: 'F32', shape: [rows, cols], bytes: new Uint8Array(f.buffer) };
}

function assemble(p: Prepared, data: Map<string, Uint8Array>): ModelWeights {
  const tensor = (name: string): TensorData => {
    const e = p.entries.get(name)!;
    return { name, dtype: e.dtype, shape: e.shape, bytes: data.get(name)! };
  };
  const linear = (l: LinearNeed): Linear => {
    if (l.kind === 'q4') {
      return { kind: 'q4f16_1', rows: l.spec.rows, cols: l.spec.cols, qweight: tensor(`${l.prefix}.q_weight`), scales: tensor(`${l.prefix}.q_scale`) };
    }
    const rows = l.parts.reduce((a, s) => a + s.rows, 0);
    const cols = l.parts[0]!.cols;
    const weight = l.names.length === 1 ? tensor(l.names[0]!) : concatRows(l.label, l.names.map(tensor), rows, cols);
    return { kind: 'dense', rows, cols, weight };
  };
  const layers = new Map<number, LayerWeights>();
  for (const l of p.needs.layers) {
    layers.set(l.index, {
      index: l.index,
      inputNorm: tensor(l.inputNorm.name), qkv: linear(l.qkv), qNorm: tensor(l.qNorm.name), kNorm: tensor(l.kNorm.name),
      o: linear(l.o), postNorm: tensor(l.postNorm.name), gateUp: linear(l.gateUp), down: linear(l.down),
    });
  }
  const out: ModelWeights = { config: p.plan.config, format: p.plan.format, layers };
  if (p.needs.embedding) out.embedding = linear(p.needs.embedding);
  if (p.needs.finalNorm) out.finalNorm = tensor(p.needs.finalNorm.name);
  if (p.needs.lmHead) out.lmHead = linear(p.needs.lmHead);
  return out;
}

/**
 * Load what `request` asks for. Progress is reported after each read; `request.signal` aborts between
 * reads. Any failure (bad header, shape, size, md5, HTTP) throws; nothing half-loaded is returned.
 */
export async function loadWeights(source: ModelSource, request: WeightRequest, opts: LoadOptions = {}): Promise<ModelWeights> {
  request.signal?.throwIfAborted();
  const p = await prepare(source, request, opts);
  const progress: LoadProgress = { bytesDone: 0, bytesTotal: p.plan.dataBytes, tensorsDone: 0, tensorsTotal: p.plan.tensorCount };
  request.onProgress?.({ ...progress });
  const data = new Map<string, Uint8Array>();
  await pool(p.plan.reads, Math.max(1, opts.concurrency ?? 4), async (read) => {
    request.signal?.throwIfAborted();
    const bytes = await readPlanned(source, read, p);
    for (const name of read.tensors) {
      const e = p.entries.get(name)!;
      data.set(name, bytes.subarray(e.start - read.start, e.end - read.start));
    }
    progress.bytesDone += read.end - read.start;
    progress.tensorsDone += read.tensors.length;
    request.onProgress?.({ ...progress });
  });
  request.signal?.throwIfAborted();
  return assemble(p, data);
}
