// MLC / WebLLM weights (what mlc-ai/*-MLC repos publish), as tvm's tensor cache writer lays them out
// (found in mlc-ai/mlc-llm and apache/tvm "dump_ndarray_cache", read 2026-11-30):
//   tensor-cache.json (older repos: ndarray-cache.json) =
//     { "metadata": {"ParamSize", "ParamBytes", "BitsPerParam"},
//       "records": [ { "dataPath": "params_shard_0.bin", "format": "raw-shard", "nbytes": <shard bytes>,
//                      "md5sum": "<hex>",
//                      "records": [ { "name", "shape", "dtype": "uint32"|"float16"|..., "format": "f32-to-bf16",
//                                     "nbytes", "byteOffset" } ] } ] }
//   params_shard_{k}.bin: the raw bytes, tensors back to back, shards capped near 32 MB.
// A record's "format": "f32-to-bf16" only changes float32 tensors (stored as bf16); q4f16_1 has none.
// We fetch a needed shard whole and check its size and md5 before using any byte of it.

import { HeaderError, TensorMissingError, TensorOffsetError, UnsupportedDTypeError } from '../errors.ts';
import { md5Hex } from './md5.ts';
import { shapeElements } from '../tensor-utils.ts';
import type { ModelSource, StoredDType, TensorData } from '../types.ts';
import { checkEntrySize, isShape, type TensorCatalogue, type TensorEntry, type WholeFile } from './catalogue.ts';

export const MLC_CACHE_FILES = ['tensor-cache.json', 'ndarray-cache.json'] as const;

const DTYPES: Record<string, StoredDType> = { uint32: 'U32', float16: 'F16', float32: 'F32', bfloat16: 'BF16' };
const DTYPE_NAMES: Record<StoredDType, string> = { U32: 'uint32', F16: 'float16', F32: 'float32', BF16: 'bfloat16' };

export async function findMlcCacheFile(source: ModelSource): Promise<string | undefined> {
  for (const f of MLC_CACHE_FILES) if (await source.exists(f)) return f;
  return undefined;
}

/** Parse a tensor cache JSON into entries and shard records (sizes, md5). */
export function parseMlcCache(bytes: Uint8Array, file: string): { entries: TensorEntry[]; shards: WholeFile[] } {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new HeaderError(`not valid JSON (${(e as Error).message})`, { file, cause: e });
  }
  const shardRecords = (json as { records?: unknown } | null)?.records;
  if (!Array.isArray(shardRecords)) throw new HeaderError('missing "records" list', { file });
  const entries: TensorEntry[] = [];
  const shards: WholeFile[] = [];
  const seenNames = new Set<string>();
  const seenShards = new Set<string>();
  for (const [k, rawShard] of shardRecords.entries()) {
    const shard = rawShard as { dataPath?: unknown; nbytes?: unknown; md5sum?: unknown; records?: unknown; format?: unknown };
    if (typeof shard?.dataPath !== 'string' || !Number.isSafeInteger(shard.nbytes) || !Array.isArray(shard.records)) {
      throw new HeaderError(`shard record ${k} needs "dataPath", "nbytes" and "records"`, { file });
    }
    if (shard.format !== undefined && shard.format !== 'raw-shard') {
      throw new HeaderError(`shard ${shard.dataPath}: format ${JSON.stringify(shard.format)} is not supported (raw-shard)`, { file });
    }
    const dataPath = shardPath(shard.dataPath.split('?')[0]!, file);   // some mirrors append "?partitions=N"
    const nbytes = shard.nbytes as number;
    if (nbytes < 0) throw new HeaderError(`shard ${dataPath}: nbytes ${nbytes} is negative`, { file });
    if (seenShards.has(dataPath)) throw new HeaderError(`shard file ${dataPath} is listed twice`, { file });
    seenShards.add(dataPath);
    const whole: WholeFile = { file: dataPath, nbytes };
    if (typeof shard.md5sum === 'string' && shard.md5sum !== '') whole.md5 = shard.md5sum.toLowerCase();
    shards.push(whole);
    const inShard: TensorEntry[] = [];
    for (const rawRec of shard.records as unknown[]) {
      const r = rawRec as { name?: unknown; shape?: unknown; dtype?: unknown; format?: unknown; nbytes?: unknown; byteOffset?: unknown };
      if (typeof r?.name !== 'string') throw new HeaderError(`a record in shard ${dataPath} has no name`, { file });
      const name = r.name;
      if (seenNames.has(name)) throw new HeaderError(`tensor is named twice in the records (a second time in shard ${dataPath})`, { file, tensor: name });
      seenNames.add(name);
      if (!isShape(r.shape)) throw new HeaderError(`bad shape ${JSON.stringify(r.shape)}`, { file, tensor: name });
      let dtype = typeof r.dtype === 'string' ? DTYPES[r.dtype] : undefined;
      if (!dtype) throw new UnsupportedDTypeError(`dtype ${JSON.stringify(r.dtype)} is not supported`, { file, tensor: name });
      if (!Number.isSafeInteger(r.nbytes) || !Number.isSafeInteger(r.byteOffset) || (r.byteOffset as number) < 0 || (r.nbytes as number) < 0) {
        throw new TensorOffsetError(`bad nbytes ${JSON.stringify(r.nbytes)} / byteOffset ${JSON.stringify(r.byteOffset)} (whole numbers ≥ 0)`, { file, tensor: name });
      }
      if (dtype === 'F32' && r.format === 'f32-to-bf16' && r.nbytes === shapeElements(r.shape) * 2) dtype = 'BF16';
      const start = r.byteOffset as number;
      const end = start + (r.nbytes as number);
      if (end > nbytes) {
        throw new TensorOffsetError(
          `bytes [${start}, ${end}) lie outside shard ${dataPath} (${nbytes} bytes)`, { file, tensor: name });
      }
      const e: TensorEntry = { name, file: dataPath, dtype, shape: r.shape, start, end };
      checkEntrySize(e);
      inShard.push(e);
    }
    // No two tensors may share bytes: one would silently be the other's data.
    let reach: TensorEntry | null = null; // of the tensors so far (by start), the one ending last
    for (const b of inShard.filter((e) => e.end > e.start).sort((x, y) => x.start - y.start || x.end - y.end)) {
      if (reach && b.start < reach.end) {
        throw new TensorOffsetError(`bytes [${b.start}, ${b.end}) overlap tensor "${reach.name}" [${reach.start}, ${reach.end}) in ${dataPath}`, { file, tensor: b.name });
      }
      if (!reach || b.end > reach.end) reach = b;
    }
    entries.push(...inShard);
  }
  return { entries, shards };
}

/**
 * A shard's dataPath as a path inside the model folder: relative, '/'-separated, no '..', '.', empty
 * segments, backslashes or URL schemes. Anything else is a HeaderError (it would read outside the model).
 */
function shardPath(dataPath: string, file: string): string {
  const parts = dataPath.split('/');
  const bad = dataPath === '' || dataPath.includes('\\') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(dataPath) ||
    parts.some((p) => p === '' || p === '.' || p === '..');
  if (bad) throw new HeaderError(`dataPath ${JSON.stringify(dataPath)} is not a file inside the model folder`, { file });
  return dataPath;
}

/** The tensor cache of an MLC folder; throws TensorMissingError (naming the cache file) for absent tensors. */
export async function openMlc(source: ModelSource, needed: readonly string[], cacheFile?: string): Promise<TensorCatalogue> {
  const file = cacheFile ?? (await findMlcCacheFile(source));
  if (!file) throw new HeaderError('no tensor-cache.json or ndarray-cache.json', { file: source.label });
  const bytes = await source.readFile(file);
  const { entries, shards } = parseMlcCache(bytes, file);
  const tensors = new Map(entries.map((e) => [e.name, e]));
  for (const name of needed) {
    if (!tensors.has(name)) throw new TensorMissingError('tensor not in any shard record', { file, tensor: name });
  }
  return {
    format: 'mlc',
    files: shards.map((s) => s.file),
    tensors,
    wholeFiles: new Map(shards.map((s) => [s.file, s])),
    metadataReads: [{ file, bytes: bytes.byteLength }],
  };
}

export interface MlcShardOut {
  file: string;                // params_shard_{k}.bin
  bytes: Uint8Array;
}

/** Split tensors into shards the way tvm's writer does: in order, a new shard when the next would pass the cap. */
export function groupByCap(tensors: readonly TensorData[], shardCapBytes: number): TensorData[][] {
  const groups: TensorData[][] = [];
  let current: TensorData[] = [];
  let size = 0;
  for (const t of tensors) {
    if (current.length > 0 && size + t.bytes.byteLength > shardCapBytes) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(t);
    size += t.bytes.byteLength;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Write each group as params_shard_{k}.bin and build the tensor cache JSON object with each shard's md5. */
export function encodeMlcShards(groups: readonly (readonly TensorData[])[]): { shards: MlcShardOut[]; cache: object } {
  const shards: MlcShardOut[] = [];
  const records: object[] = [];
  let paramBytes = 0;
  let paramCount = 0;
  groups.forEach((group, k) => {
    const nbytes = group.reduce((a, t) => a + t.bytes.byteLength, 0);
    const bytes = new Uint8Array(nbytes);
    const recs: object[] = [];
    let offset = 0;
    for (const t of group) {
      bytes.set(t.bytes, offset);
      recs.push({ name: t.name, shape: t.shape, dtype: DTYPE_NAMES[t.dtype], format: 'f32-to-bf16', nbytes: t.bytes.byteLength, byteOffset: offset });
      offset += t.bytes.byteLength;
      paramCount += 1;
    }
    paramBytes += nbytes;
    const file = `params_shard_${k}.bin`;
    shards.push({ file, bytes });
    records.push({ dataPath: file, format: 'raw-shard', nbytes, records: recs, md5sum: md5Hex(bytes) });
  });
  return { shards, cache: { metadata: { ParamSize: paramCount, ParamBytes: paramBytes, BitsPerParam: 4.5 }, records } };
}
