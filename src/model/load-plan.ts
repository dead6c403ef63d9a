// The format-independent half of loading weights: a plan of byte ranges (merged where tensors touch),
// read with bounded concurrency, checked (MLC shards: size and md5), and handed to the format's own
// assembler. Formats prepare a PreparedLoad from headers only (load-weights.ts for safetensors and MLC,
// formats/gguf/gguf-load.ts for GGUF), so planning costs no weight bytes.

import { ChecksumError, ConfigError, FileTooLongError, ShardSizeError, TruncatedFileError } from './errors.ts';
import type { WholeFile } from './formats/catalogue.ts';
import { md5Hex } from './formats/md5.ts';
import type { LoadProgress, ModelConfig, ModelSource, ModelWeights, WeightFormat, WeightRequest } from './types.ts';

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
  format: WeightFormat;
  reads: PlannedRead[];
  dataBytes: number;           // sum of reads
  metadataBytes: number;       // config, index and header bytes read to make the plan
  tensorCount: number;
  /** Tensor bytes of each requested layer (what it weighs on a device, before its KV cache). */
  layerBytes: Map<number, number>;
  /** Tensor bytes outside the layers: embedding, final norm, head. */
  fixedBytes: number;
}

export interface LoadOptions {
  /** Parallel reads (default 4). */
  concurrency?: number;
  /** MLC: read shards whole and check size + md5 (default true). false: ranged reads, size checks only. */
  verifyMlcShards?: boolean;
  /** Largest merged ranged read in bytes (default 64 MiB). */
  maxReadBytes?: number;
}

/** Where one needed tensor's bytes are. `layer` is absent for the embedding, final norm and head. */
export interface Located {
  name: string;
  file: string;
  start: number;
  end: number;
  layer?: number;
}

export interface PreparedLoad {
  plan: WeightPlan;
  located: Map<string, Located>;
  /** MLC: shards read whole and verified; the index file that records them. */
  wholeFiles?: Map<string, WholeFile>;
  indexFile?: string;
  /**
   * Formats that stream (GGUF): the tensors that must be in JS before the weights are assembled (norms and
   * the small tensors a format converts); every other located tensor may be streamed (load-stream.ts).
   */
  eager?: ReadonlySet<string>;
  /**
   * Canonical weights from the bytes of every located tensor; with `streamed`, those tensors are absent
   * from `data` and their holders carry a `stream` ref instead of bytes.
   */
  assemble(data: Map<string, Uint8Array>, streamed?: ReadonlySet<string>): ModelWeights;
}

export function checkRequest(c: ModelConfig, req: WeightRequest, file: string): void {
  const [a, b] = req.layers;
  if (!(Number.isInteger(a) && Number.isInteger(b) && 0 <= a && a <= b)) throw new RangeError(`layer range [${a}, ${b}) is not a range`);
  // A well-formed range past the end: the files say fewer layers than whoever asked expects (another
  // model, or a mirror that changed): the files' fault as far as this device can tell.
  if (b > c.numLayers) {
    throw new ConfigError(`layer range [${a}, ${b}) is outside the model's ${c.numLayers} layers (another model, or the files changed?)`, { file });
  }
}

/** Ranged reads sorted by position, tensors that touch merged into one read (up to maxReadBytes). */
export function planReads(located: readonly Located[], opts: LoadOptions, wholeFiles?: Map<string, WholeFile>): PlannedRead[] {
  if (wholeFiles && opts.verifyMlcShards !== false) {
    const byFile = new Map<string, string[]>();
    for (const e of located) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e.name]);
    return [...byFile].map(([file, tensors]) => ({ file, start: 0, end: wholeFiles.get(file)!.nbytes, whole: true, tensors }));
  }
  const maxBytes = opts.maxReadBytes ?? 64 * 1024 * 1024;
  const sorted = [...located].sort((x, y) => (x.file < y.file ? -1 : x.file > y.file ? 1 : x.start - y.start));
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

/** The plan of a prepared format: reads, byte totals, and what each layer weighs. */
export function makePlan(config: ModelConfig, format: WeightFormat, located: Map<string, Located>, metadataBytes: number,
  opts: LoadOptions, wholeFiles?: Map<string, WholeFile>): WeightPlan {
  const reads = planReads([...located.values()], opts, wholeFiles);
  const layerBytes = new Map<number, number>();
  let fixedBytes = 0;
  for (const e of located.values()) {
    if (e.layer === undefined) fixedBytes += e.end - e.start;
    else layerBytes.set(e.layer, (layerBytes.get(e.layer) ?? 0) + e.end - e.start);
  }
  return {
    config, format, reads, dataBytes: reads.reduce((a, r) => a + (r.end - r.start), 0), metadataBytes,
    tensorCount: located.size, layerBytes, fixedBytes,
  };
}

/** Progress while a read's bytes arrive: at most this often. */
export const ARRIVAL_REPORT_MS = 100;

async function readPlanned(source: ModelSource, read: PlannedRead, p: PreparedLoad, onBytes?: (n: number) => void): Promise<Uint8Array> {
  if (read.whole) {
    const record = p.wholeFiles!.get(read.file)!;
    // At most the recorded size is read: a mirror padding the shard cannot make us read (and hold) more.
    const bytes = await source.readFile(read.file, { maxBytes: record.nbytes }).catch((e: unknown) => {
      if (e instanceof FileTooLongError) throw new ShardSizeError(`is more than the ${record.nbytes} bytes ${p.indexFile} records`, { file: read.file, cause: e });
      throw e;
    });
    if (bytes.byteLength !== record.nbytes) {
      throw new ShardSizeError(`is ${bytes.byteLength} bytes but ${p.indexFile} records ${record.nbytes}`, { file: read.file });
    }
    if (record.md5) {
      const got = md5Hex(bytes);
      if (got !== record.md5) throw new ChecksumError(`md5 ${got} but ${p.indexFile} records ${record.md5}`, { file: read.file });
    }
    return bytes;
  }
  try {
    return await source.readRange(read.file, read.start, read.end, onBytes);
  } catch (e) {
    if (!(e instanceof TruncatedFileError) || e.tensor) throw e;
    // Name the first tensor that the file cuts off.
    for (const name of read.tensors) {
      const t = p.located.get(name)!;
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

/** Read the planned ranges of `names` (all when absent) into views by tensor, progress after each read. */
export async function readTensors(source: ModelSource, p: PreparedLoad, request: WeightRequest, opts: LoadOptions,
  progress: LoadProgress, names?: ReadonlySet<string>): Promise<Map<string, Uint8Array>> {
  const reads = names ? planReads([...names].map((n) => p.located.get(n)!), opts) : p.plan.reads;
  const data = new Map<string, Uint8Array>();
  // Bytes of reads in flight that have arrived: progress counts them (a slow link shows its bytes coming in).
  let arriving = 0;
  let reportedAt = 0;
  await pool(reads, Math.max(1, opts.concurrency ?? 4), async (read) => {
    request.signal?.throwIfAborted();
    let arrived = 0;
    try {
      const bytes = await readPlanned(source, read, p, (n) => {
        const add = Math.min(n, read.end - read.start - arrived);
        arrived += add;
        arriving += add;
        if (Date.now() - reportedAt < ARRIVAL_REPORT_MS) return;
        reportedAt = Date.now();
        request.onProgress?.({ ...progress, bytesDone: progress.bytesDone + arriving });
      });
      for (const name of read.tensors) {
        const e = p.located.get(name)!;
        data.set(name, bytes.subarray(e.start - read.start, e.end - read.start));
      }
    } finally {
      arriving -= arrived;
    }
    progress.bytesDone += read.end - read.start;
    progress.tensorsDone += read.tensors.length;
    request.onProgress?.({ ...progress, bytesDone: progress.bytesDone + arriving });
  });
  request.signal?.throwIfAborted();
  return data;
}

export function startProgress(p: PreparedLoad, request: WeightRequest): LoadProgress {
  const progress: LoadProgress = { bytesDone: 0, bytesTotal: p.plan.dataBytes, tensorsDone: 0, tensorsTotal: p.plan.tensorCount };
  request.onProgress?.({ ...progress });
  return progress;
}

/** Read every planned range (progress after each, abort between reads) and assemble. Complete or throws. */
export async function executeLoad(source: ModelSource, p: PreparedLoad, request: WeightRequest, opts: LoadOptions): Promise<ModelWeights> {
  return p.assemble(await readTensors(source, p, request, opts, startProgress(p, request)));
}
