// GGUF headers through a ModelSource: parsed by our bounded parser (./gguf-parse.ts), which reads the
// header from the front in 2 MiB ranges (4 reads for a Qwen3 file with its 151,936-token vocabulary),
// so headers are read by Range from a URL, a local file or a picked folder alike, and cached like any
// other range; every count and length is bounded before it is used (./gguf-limits.ts). We then check
// what a header cannot say by itself: types, sizes and offsets against the file's real length.

import {
  HeaderError, ModelSourceError, SplitPartMissingError, TensorOffsetError, TruncatedFileError,
} from '../../errors.ts';
import type { GgmlType, ModelSource } from '../../types.ts';
import { GGML_TYPES, ggmlTypeById, ggmlTypeNameById } from './ggml-types.ts';
import { GGUF_LIMITS } from './gguf-limits.ts';
import { parseGgufHeader, type GgufMetadataValue, type RawTensorInfo } from './gguf-parse.ts';

export type { GgufMetadataValue } from './gguf-parse.ts';

export interface GgufTensorInfo {
  name: string;
  file: string;                // the GGUF (part) holding it
  type?: GgmlType;             // undefined: a ggml type pooled cannot read (typeName says which)
  typeName: string;
  ne: number[];                // ne[0] is the contiguous axis: a [N, K] matrix has ne [K, N]
  start: number;               // absolute byte range in `file` (0 / 0 when the type is unknown)
  end: number;
}

export interface GgufHeader {
  file: string;
  version: number;
  metadata: Record<string, GgufMetadataValue>;
  tensors: GgufTensorInfo[];
  dataStart: number;           // the data section: the next multiple of general.alignment after the infos
  fileSize: number;
  headerBytes: number;         // bytes read to parse the header
}

const SPLIT_RE = /^(?<prefix>.*)-(?<no>\d{5})-of-(?<count>\d{5})\.gguf$/;

/** "m-00002-of-00003.gguf" → { prefix: "m", no: 2, count: 3 }. */
export function parseSplitName(file: string): { prefix: string; no: number; count: number } | null {
  const m = SPLIT_RE.exec(file);
  return m ? { prefix: m.groups!.prefix!, no: Number(m.groups!.no), count: Number(m.groups!.count) } : null;
}

export function splitPartName(prefix: string, no: number, count: number): string {
  return `${prefix}-${String(no).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.gguf`;
}

async function fileSize(source: ModelSource, file: string): Promise<number> {
  if (source.size) return source.size(file);
  try {
    await source.readRange(file, 0, 2 ** 42);           // past any real file: the answer names its size
  } catch (e) {
    if (e instanceof TruncatedFileError && e.fileSize !== undefined) return e.fileSize;
    throw e;
  }
  throw new HeaderError('cannot tell the file\'s length from this source', { file });
}

/** Parse one GGUF file's header (metadata + tensor infos) and check every tensor's byte range. */
export async function readGgufHeader(source: ModelSource, file: string): Promise<GgufHeader> {
  const size = await fileSize(source, file);
  const raw = await parseGgufHeader((start, end) => source.readRange(file, start, end), size, file);
  const { metadata, alignment } = raw;
  const dataStart = raw.infosEnd + ((alignment - (raw.infosEnd % alignment)) % alignment);
  const tensors = raw.tensors.map((t) => tensorInfo(t, file, dataStart));
  checkLayout(tensors, file, dataStart, alignment, size);
  return { file, version: raw.version, metadata, tensors, dataStart, fileSize: size, headerBytes: raw.bytesRead };
}

function tensorInfo(t: RawTensorInfo, file: string, dataStart: number): GgufTensorInfo {
  const ne = t.ne;
  const info = ggmlTypeById(t.typeId);
  const base = { name: t.name, file, typeName: ggmlTypeNameById(t.typeId), ne };
  if (!info) return { ...base, start: 0, end: 0 };
  if (ne.length === 0 || ne.some((d) => !Number.isSafeInteger(d) || d <= 0)) throw new HeaderError(`bad shape ne = [${ne}]`, { file, tensor: t.name });
  if (ne[0]! % info.blockSize !== 0) {
    throw new HeaderError(`${info.name} needs ne[0] to be a multiple of ${info.blockSize}, got [${ne}]`, { file, tensor: t.name });
  }
  const start = dataStart + t.offset;
  return { ...base, type: info.name, start, end: start + (ne.reduce((a, d) => a * d, 1) / info.blockSize) * info.blockBytes };
}

/**
 * As gguf.cpp requires: names unique, and each tensor's offset exactly where the previous one's data
 * ends (padded to the alignment), in the order of the infos; an offset anywhere else is a
 * TensorOffsetError. Data running past the end of the file is a TruncatedFileError naming the first
 * tensor cut off. After a tensor of a type we cannot size, offsets are only checked against the file.
 */
function checkLayout(tensors: GgufTensorInfo[], file: string, dataStart: number, alignment: number, size: number): void {
  const names = new Set<string>();
  let expected: number | undefined = dataStart;
  for (const t of tensors) {
    if (names.has(t.name)) throw new HeaderError('tensor listed twice', { file, tensor: t.name });
    names.add(t.name);
    if (t.type === undefined) { expected = undefined; continue; }
    const offset = t.start - dataStart;
    if (expected !== undefined && t.start !== expected) {
      throw new TensorOffsetError(`data offset ${offset}, but the tensors before it end at ${expected - dataStart}`, { file, tensor: t.name });
    }
    if (offset % alignment !== 0) throw new TensorOffsetError(`data offset ${offset} is not a multiple of general.alignment ${alignment}`, { file, tensor: t.name });
    if (t.end > size) {
      const detail = `${t.type} [${t.ne}] needs bytes [${t.start}, ${t.end}) but the file is only ${size} bytes long`;
      if (expected !== undefined) throw new TruncatedFileError(detail, { file, tensor: t.name, fileSize: size });
      throw new TensorOffsetError(detail, { file, tensor: t.name });
    }
    if (expected !== undefined) expected = t.end + ((alignment - ((t.end - dataStart) % alignment)) % alignment);
  }
}

/** A whole GGUF model: the first file's metadata and the tensors of every part. */
export interface GgufModel {
  files: string[];
  metadata: Record<string, GgufMetadataValue>;
  tensors: Map<string, GgufTensorInfo>;
  headers: GgufHeader[];
}

/**
 * Open a GGUF model from its first file (or only file). A split model ("-00001-of-00003.gguf", or
 * split.count > 1 in the metadata) has every part read and checked, in order: at most
 * GGUF_LIMITS.splitParts parts, and the first missing part is a SplitPartMissingError naming it (the
 * parts after it are not asked for).
 */
export async function openGgufModel(source: ModelSource, file: string): Promise<GgufModel> {
  const first = await readGgufHeader(source, file);
  const split = parseSplitName(file.split('/').pop()!);
  const declared = first.metadata['split.count'];
  const count = declared ?? split?.count ?? 1;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw new HeaderError(`split.count ${JSON.stringify(count)} is not a part count`, { file });
  if (count <= 1) return { files: [file], metadata: first.metadata, tensors: new Map(first.tensors.map((t) => [t.name, t])), headers: [first] };
  if (count > GGUF_LIMITS.splitParts) throw new HeaderError(`split.count is ${count}, more than the ${GGUF_LIMITS.splitParts} parts a model may have (limit splitParts)`, { file });
  if (!split) throw new HeaderError(`split.count is ${count} but the file name is not "<name>-00001-of-${String(count).padStart(5, '0')}.gguf"`, { file });
  if (split.no !== 1) throw new HeaderError(`this is part ${split.no} of ${split.count}: open part 1 (${splitPartName(split.prefix, 1, split.count)})`, { file });
  if (split.count !== count) throw new HeaderError(`the name says ${split.count} parts but split.count is ${count}`, { file });
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : '';
  const names = Array.from({ length: count }, (_, i) => dir + splitPartName(split.prefix.split('/').pop()!, i + 1, count));
  const headers = [first];
  let tensorCount = first.tensors.length;
  for (let i = 1; i < count; i++) {
    const n = names[i]!;
    const missing = (cause?: unknown) => new SplitPartMissingError(`split GGUF of ${count} parts: part ${i + 1} (${n}) is missing`, { file: n, ...(cause ? { cause } : {}) });
    if (!(await source.exists(n))) throw missing();
    const h = await readGgufHeader(source, n).catch((e: unknown) => {
      if (e instanceof ModelSourceError && (e.status === 404 || /not found/.test(e.message))) throw missing(e);
      throw e;
    });
    if ((tensorCount += h.tensors.length) > GGUF_LIMITS.tensors) {
      throw new HeaderError(`the parts up to ${n} hold ${tensorCount} tensors, more than ${GGUF_LIMITS.tensors} (limit tensors)`, { file: n });
    }
    headers.push(h);
  }
  const tensors = new Map<string, GgufTensorInfo>();
  headers.forEach((h, i) => {
    const no = Number(h.metadata['split.no'] ?? i);
    if (no !== i) throw new HeaderError(`split.no is ${no}, expected ${i}`, { file: h.file });
    for (const t of h.tensors) {
      if (tensors.has(t.name)) throw new HeaderError(`tensor "${t.name}" is in ${tensors.get(t.name)!.file} and in ${h.file}`, { file: h.file, tensor: t.name });
      tensors.set(t.name, t);
    }
  });
  const declaredTensors = first.metadata['split.tensors.count'];
  if (typeof declaredTensors === 'number' && declaredTensors !== tensors.size) {
    throw new HeaderError(`split.tensors.count is ${declaredTensors} but the ${count} parts hold ${tensors.size} tensors`, { file });
  }
  return { files: names, metadata: first.metadata, tensors, headers };
}

/** Bytes of the tensor data of one GGUF tensor type and shape (ne), for planning. */
export function ggufTensorDataBytes(type: GgmlType, ne: readonly number[]): number {
  const info = GGML_TYPES[type];
  return (ne.reduce((a, d) => a * d, 1) / info.blockSize) * info.blockBytes;
}

const opened = new WeakMap<ModelSource, Map<string, Promise<GgufModel>>>();

/** openGgufModel, parsed once per source object (config, tokenizer and weights all need the header). */
export function cachedGgufModel(source: ModelSource, file: string): Promise<GgufModel> {
  let perSource = opened.get(source);
  if (!perSource) opened.set(source, (perSource = new Map()));
  let p = perSource.get(file);
  if (!p) {
    p = openGgufModel(source, file);
    perSource.set(file, p);
    p.catch(() => perSource!.delete(file));
  }
  return p;
}
