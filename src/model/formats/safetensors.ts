// safetensors: u64 little-endian header length N, N bytes of JSON
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the data section;
// offsets are relative to byte 8 + N. Sharded checkpoints add model.safetensors.index.json
// ({"metadata": {...}, "weight_map": {name: file}}). We read only headers here; data later, by range.

import { HeaderError, TensorMissingError, TensorOffsetError, TruncatedFileError, UnsupportedDTypeError } from '../errors.ts';
import type { ModelSource, StoredDType, TensorData } from '../types.ts';
import { checkEntrySize, isShape, type TensorCatalogue, type TensorEntry } from './catalogue.ts';

export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX = 'model.safetensors.index.json';
const MAX_HEADER_BYTES = 100 * 1024 * 1024;   // the safetensors spec's own limit
const READABLE: readonly string[] = ['BF16', 'F16', 'F32'];

const decoder = new TextDecoder();

function parseJson(bytes: Uint8Array, file: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(decoder.decode(bytes));
  } catch (e) {
    throw new HeaderError(`${what} is not valid JSON (${(e as Error).message})`, { file, cause: e });
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HeaderError(`${what} is not a JSON object`, { file });
  return v as Record<string, unknown>;
}

/** Entries of one file's JSON header; `dataStart` = 8 + N. Checks dtypes, sizes and that offsets tile the data. */
export function parseSafetensorsHeader(json: Uint8Array, file: string, dataStart: number): TensorEntry[] {
  const header = parseJson(json, file, 'safetensors header');
  const entries: TensorEntry[] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | null;
    if (info === null || typeof info !== 'object') throw new HeaderError('header entry is not an object', { file, tensor: name });
    if (typeof info.dtype !== 'string') throw new HeaderError('header entry has no dtype', { file, tensor: name });
    if (!READABLE.includes(info.dtype)) {
      throw new UnsupportedDTypeError(`dtype ${info.dtype} is not supported (BF16, F16, F32)`, { file, tensor: name });
    }
    if (!isShape(info.shape)) throw new HeaderError(`bad shape ${JSON.stringify(info.shape)}`, { file, tensor: name });
    const off = info.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((o) => Number.isSafeInteger(o) && o >= 0) || off[1] < off[0]) {
      throw new TensorOffsetError(`bad data_offsets ${JSON.stringify(off)}`, { file, tensor: name });
    }
    const e: TensorEntry = {
      name, file, dtype: info.dtype as StoredDType, shape: info.shape,
      start: dataStart + (off[0] as number), end: dataStart + (off[1] as number),
    };
    checkEntrySize(e);
    entries.push(e);
  }
  // Like the reference implementation: tensors must tile the data section with no gap or overlap, so
  // an offset pointing outside the data shows up as a hole here, before any data is read.
  const sorted = [...entries].sort((a, b) => a.start - b.start || a.end - b.end);
  let expected = dataStart;
  for (const e of sorted) {
    if (e.start !== expected) {
      const how = e.start > expected ? 'leave a gap (or point outside the data)' : 'overlap the previous tensor';
      throw new TensorOffsetError(
        `data_offsets [${e.start - dataStart}, ${e.end - dataStart}] ${how}: the previous tensor ends at ${expected - dataStart}`,
        { file, tensor: e.name });
    }
    expected = e.end;
  }
  return entries;
}

/** Read and parse one file's header with two small ranged reads. */
export async function readSafetensorsHeader(source: ModelSource, file: string): Promise<{ entries: TensorEntry[]; headerBytes: number }> {
  let lengthBytes: Uint8Array;
  try {
    lengthBytes = await source.readRange(file, 0, 8);
  } catch (e) {
    if (e instanceof TruncatedFileError) {
      throw new TruncatedFileError('shorter than the 8-byte header length: not a safetensors file', { file, cause: e });
    }
    throw e;
  }
  const n = new DataView(lengthBytes.buffer, lengthBytes.byteOffset, 8).getBigUint64(0, true);
  if (n === 0n || n > BigInt(MAX_HEADER_BYTES)) {
    throw new HeaderError(`header length ${n} is not plausible (1..${MAX_HEADER_BYTES} bytes): not a safetensors file?`, { file });
  }
  const length = Number(n);
  let json: Uint8Array;
  try {
    json = await source.readRange(file, 8, 8 + length);
  } catch (e) {
    if (e instanceof TruncatedFileError) {
      throw new HeaderError(`header length ${length} runs past the end of the file`, { file, cause: e });
    }
    throw e;
  }
  return { entries: parseSafetensorsHeader(json, file, 8 + length), headerBytes: 8 + length };
}

/** Parse model.safetensors.index.json → tensor name → shard file. */
export function parseSafetensorsIndex(bytes: Uint8Array, file = SAFETENSORS_INDEX): Map<string, string> {
  const index = parseJson(bytes, file, 'index');
  const map = index.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) throw new HeaderError('missing "weight_map" object', { file });
  const out = new Map<string, string>();
  for (const [name, shard] of Object.entries(map as Record<string, unknown>)) {
    if (typeof shard !== 'string' || shard === '') throw new HeaderError(`weight_map entry is not a file name`, { file, tensor: name });
    out.set(name, shard);
  }
  return out;
}

/** Every tensor name of a safetensors model (the index's weight_map, or the single file's header). */
export async function safetensorsTensorNames(source: ModelSource): Promise<Set<string>> {
  if (await source.exists(SAFETENSORS_INDEX)) return new Set(parseSafetensorsIndex(await source.readFile(SAFETENSORS_INDEX)).keys());
  return new Set((await readSafetensorsHeader(source, SAFETENSORS_FILE)).entries.map((e) => e.name));
}

/**
 * Headers of the files that hold `needed` (single file, or the shards the index points to).
 * Throws TensorMissingError naming the index or the shard when a needed tensor is absent.
 */
export async function openSafetensors(source: ModelSource, needed: readonly string[]): Promise<TensorCatalogue> {
  const metadataReads: TensorCatalogue['metadataReads'] = [];
  let fileOf: (name: string) => string;
  let files: string[];
  // A single model.safetensors holds every tensor; only without it is the index read (asked in this
  // order so that a single-file checkpoint is never asked for an index it does not have).
  if (!(await source.exists(SAFETENSORS_FILE)) && (await source.exists(SAFETENSORS_INDEX))) {
    const bytes = await source.readFile(SAFETENSORS_INDEX);
    metadataReads.push({ file: SAFETENSORS_INDEX, bytes: bytes.byteLength });
    const map = parseSafetensorsIndex(bytes);
    for (const name of needed) {
      if (!map.has(name)) throw new TensorMissingError('tensor not listed in weight_map', { file: SAFETENSORS_INDEX, tensor: name });
    }
    fileOf = (name) => map.get(name)!;
    files = [...new Set(needed.map(fileOf))];
  } else {
    fileOf = () => SAFETENSORS_FILE;
    files = [SAFETENSORS_FILE];
  }
  const tensors = new Map<string, TensorEntry>();
  const headers = await Promise.all(files.map((f) => readSafetensorsHeader(source, f)));
  headers.forEach((h, i) => {
    metadataReads.push({ file: files[i]!, bytes: h.headerBytes });
    for (const e of h.entries) tensors.set(e.name, e);
  });
  for (const name of needed) {
    const e = tensors.get(name);
    if (!e || e.file !== fileOf(name)) throw new TensorMissingError('tensor not in the file', { file: fileOf(name), tensor: name });
  }
  return { format: 'safetensors', files, tensors, metadataReads };
}

/** Serialise tensors into one safetensors file (header padded with spaces to 8 bytes, like the reference writer). */
export function encodeSafetensors(tensors: readonly TensorData[], metadata: Record<string, string> = { format: 'pt' }): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.byteLength] };
    offset += t.bytes.byteLength;
  }
  const raw = new TextEncoder().encode(JSON.stringify(header));
  const jsonBytes = new Uint8Array(raw.byteLength + ((8 - (raw.byteLength % 8)) % 8)).fill(0x20);
  jsonBytes.set(raw);
  const out = new Uint8Array(8 + jsonBytes.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.byteLength), true);
  out.set(jsonBytes, 8);
  let p = 8 + jsonBytes.byteLength;
  for (const t of tensors) {
    out.set(t.bytes, p);
    p += t.bytes.byteLength;
  }
  return out;
}
