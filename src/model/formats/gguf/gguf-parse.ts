// A bounded GGUF v2/v3 header parser (little-endian):
//   "GGUF" | u32 version | u64 tensor_count | u64 kv_count | kv pairs | tensor infos | pad to alignment
//   kv: string key, u32 value type, value (arrays: u32 element type, u64 count, elements)
//   string: u64 length + UTF-8 bytes; tensor info: name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset
// The header is read from the front in steps (`read`, 2 MiB at a time, more when one value needs it), and
// nothing is trusted: every count and length is checked against GGUF_LIMITS and against the bytes the
// file can still hold (a tensor info takes at least 32 bytes, an array of n elements of type t at least
// n·size(t)) before anything is allocated or looped over. A file that claims more than it holds is a
// TruncatedFileError; one that claims more than any real model needs is a HeaderError naming the limit.

import { HeaderError, TruncatedFileError } from '../../errors.ts';
import { GGUF_LIMITS as L, MIN_KV_BYTES, MIN_TENSOR_INFO_BYTES } from './gguf-limits.ts';

export type GgufMetadataValue = string | number | boolean | GgufMetadataValue[];

export interface RawTensorInfo { name: string; ne: number[]; typeId: number; offset: number }

export interface RawGgufHeader {
  version: number;
  metadata: Record<string, GgufMetadataValue>;
  tensors: RawTensorInfo[];
  infosEnd: number;          // where the tensor infos end (the data starts at the next multiple of the alignment)
  alignment: number;
  bytesRead: number;
}

const STEP = 2 * 2 ** 20;
const MAGIC = 0x46554747;    // "GGUF" read as a little-endian u32

/** Value types (gguf.h enum gguf_type): bytes of one scalar as stored; strings take at least 8. */
const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const STRING = 8, ARRAY = 9;

/**
 * A window on the header, moving forward: bytes [base, loaded) of the file. The parser only ever needs
 * the bytes from where it is onward (each value is decoded as soon as its bytes are in), so a step drops
 * what lies before `from`: the window is at most one value plus a step, however long the header is.
 */
class HeaderWindow {
  buf = new Uint8Array(0);
  view = new DataView(this.buf.buffer);
  base = 0;
  loaded = 0;
  read = 0;
  constructor(private readonly fetch: (start: number, end: number) => Promise<Uint8Array>, private readonly size: number, private readonly file: string) {}

  /** Make bytes [from, end) available; `what` names the value that needs them, for the error. */
  async need(from: number, end: number, what: string): Promise<void> {
    if (end <= this.loaded) return;
    if (end > this.size) {
      throw new TruncatedFileError(`the GGUF header runs past the end of the file (${what} needs bytes up to ${end}; the file is ${this.size} bytes): the file is truncated`, { file: this.file, fileSize: this.size });
    }
    if (end > L.headerBytes) throw new HeaderError(`${what} takes the header past ${L.headerBytes} bytes, more than any real model's (limit headerBytes)`, { file: this.file });
    const target = Math.min(this.size, L.headerBytes, Math.max(end, this.loaded + STEP));
    const bytes = await this.fetch(this.loaded, target);
    if (bytes.byteLength !== target - this.loaded) throw new HeaderError(`a read of bytes [${this.loaded}, ${target}) returned ${bytes.byteLength} bytes`, { file: this.file });
    const keep = this.buf.subarray(from - this.base, this.loaded - this.base);
    const next = new Uint8Array(keep.byteLength + bytes.byteLength);
    next.set(keep);
    next.set(bytes, keep.byteLength);
    this.buf = next;
    this.view = new DataView(next.buffer);
    this.base = from;
    this.read += bytes.byteLength;
    this.loaded = target;
  }

  release(): void {
    this.buf = new Uint8Array(0);
    this.view = new DataView(this.buf.buffer);
  }
}

/**
 * Parse a GGUF header of a file `size` bytes long, reading it through `read(start, end)`. Every failure
 * is a HeaderError or a TruncatedFileError naming the file (and the key or tensor when there is one).
 */
export async function parseGgufHeader(read: (start: number, end: number) => Promise<Uint8Array>, size: number, file: string): Promise<RawGgufHeader> {
  const h = new HeaderWindow(read, size, file);
  try {
    return await parseFrom(h, size, file);
  } finally {
    h.release();           // an error's stack keeps this frame's closures (and the window) until it is printed
  }
}

async function parseFrom(h: HeaderWindow, size: number, file: string): Promise<RawGgufHeader> {
  const decoder = new TextDecoder();
  let pos = 0;
  const bad = (detail: string, tensor?: string) => new HeaderError(detail, { file, ...(tensor ? { tensor } : {}) });
  const truncated = (detail: string) => new TruncatedFileError(`the GGUF header runs past the end of the file (${detail}; the file is ${size} bytes): the file is truncated`, { file, fileSize: size });
  /** A u64 as a Number, refused past 2^53 (no real count or offset comes near it). */
  const u64 = (what: string): number => {
    const v = h.view.getBigUint64(pos - h.base, true);
    pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`${what} is ${v}, past 2^53`);
    return Number(v);
  };
  const u32 = (): number => { const v = h.view.getUint32(pos - h.base, true); pos += 4; return v; };
  /** Bytes the file holds after `pos`: what every count and length is checked against. */
  const left = () => size - pos;

  await h.need(0, Math.min(size, 24), 'the fixed header');
  if (size < 4 || h.view.getUint32(0, true) !== MAGIC) throw bad('not a GGUF file (no "GGUF" magic at byte 0)');
  if (size < 24) throw new TruncatedFileError(`is ${size} bytes: too short for a GGUF header (24)`, { file, fileSize: size });
  pos = 4;
  const version = u32();
  if (version !== 2 && version !== 3) throw bad(`GGUF version ${version} is not supported (2 or 3)`);
  const tensorCount = u64('tensor_count');
  const kvCount = u64('kv_count');
  if (tensorCount > L.tensors) throw bad(`tensor_count is ${tensorCount}, more than the ${L.tensors} any real model has (limit tensors)`);
  if (kvCount > L.kvPairs) throw bad(`kv_count is ${kvCount}, more than ${L.kvPairs} (limit kvPairs)`);
  const least = tensorCount * MIN_TENSOR_INFO_BYTES + kvCount * MIN_KV_BYTES;
  if (least > left()) {
    throw truncated(`it claims ${tensorCount} tensors and ${kvCount} metadata pairs, at least ${24 + least} bytes of header`);
  }

  /** A length-prefixed string of at most `max` bytes, decoded once all its bytes are in. */
  const string = async (what: string, max: number): Promise<string> => {
    if (pos + 8 > h.loaded) await h.need(pos, pos + 8, what);
    const len = u64(`the length of ${what}`);
    if (len > max) throw bad(`${what} is ${len} bytes long, more than ${max}`);
    if (len > left()) throw truncated(`${what} is ${len} bytes long, ${left()} bytes are left`);
    if (pos + len > h.loaded) await h.need(pos, pos + len, what);
    return text(len);
  };
  /** The next `len` bytes as UTF-8 (short strings by hand: TextDecoder costs ≈1 µs a call, and a vocabulary has 300k). */
  const text = (len: number): string => {
    const b = h.buf, at = pos - h.base;
    const s = len <= 64 ? shortUtf8(b, at, at + len) : null;
    const out = s ?? decoder.decode(b.subarray(at, at + len));
    pos += len;
    return out;
  };
  /** Strings already loaded in full are read without a promise (the hot path: a vocabulary's 300k strings). */
  const stringNow = (max: number): string | null => {
    if (pos + 8 > h.loaded) return null;
    const len = h.view.getBigUint64(pos - h.base, true);
    if (len > BigInt(Math.min(max, h.loaded - pos - 8))) return null;
    pos += 8;
    return text(Number(len));
  };
  const scalar = (type: number): number | boolean => {
    const v = h.view;
    const o = pos - h.base;
    pos += SCALAR_BYTES[type]!;
    switch (type) {
      case 0: return v.getUint8(o);
      case 1: return v.getInt8(o);
      case 2: return v.getUint16(o, true);
      case 3: return v.getInt16(o, true);
      case 4: return v.getUint32(o, true);
      case 5: return v.getInt32(o, true);
      case 6: return v.getFloat32(o, true);
      case 7: return v.getUint8(o) !== 0;
      case 10: return Number(v.getBigUint64(o, true));
      case 11: return Number(v.getBigInt64(o, true));
      default: return v.getFloat64(o, true);
    }
  };

  const metadata: Record<string, GgufMetadataValue> = {};
  let arrayElements = 0;
  for (let i = 0; i < kvCount; i++) {
    const key = await string(`metadata key ${i}`, L.keyBytes);
    if (Object.hasOwn(metadata, key)) throw bad(`metadata key "${key}" appears twice`);
    if (pos + 4 > h.loaded) await h.need(pos, pos + 4, `"${key}"`);
    const type = u32();
    const start = pos;
    if (type === STRING) {
      metadata[key] = await string(`"${key}"`, L.stringBytes);
    } else if (type === ARRAY) {
      if (pos + 12 > h.loaded) await h.need(pos, pos + 12, `"${key}"`);
      const of = u32();
      const n = u64(`"${key}" element count`);
      const each = of === STRING ? 8 : SCALAR_BYTES[of];
      if (each === undefined) throw bad(`"${key}" is an array of value type ${of}${of === ARRAY ? ' (nested arrays are not supported)' : ', which GGUF does not define'}`);
      if (n > L.arrayElements) throw bad(`"${key}" has ${n} elements, more than the ${L.arrayElements} any real model's metadata has (limit arrayElements)`);
      if ((arrayElements += n) > L.totalArrayElements) throw bad(`"${key}" brings the metadata to ${arrayElements} array elements, more than ${L.totalArrayElements} (limit totalArrayElements)`);
      if (n * each > L.valueBytes) throw bad(`"${key}" takes at least ${n * each} bytes, more than ${L.valueBytes} (limit valueBytes)`);
      if (n * each > left()) throw truncated(`"${key}" has ${n} elements, at least ${n * each} bytes, ${left()} bytes are left`);
      const values: GgufMetadataValue[] = new Array<GgufMetadataValue>(n);
      if (of === STRING) {
        for (let j = 0; j < n; j++) {
          values[j] = stringNow(L.stringBytes) ?? await string(`"${key}"[${j}]`, L.stringBytes);
          if (pos - start > L.valueBytes) throw bad(`"${key}" is more than ${L.valueBytes} bytes (limit valueBytes)`);
        }
      } else {
        if (pos + n * each > h.loaded) await h.need(pos, pos + n * each, `"${key}"`);
        for (let j = 0; j < n; j++) values[j] = scalar(of);
      }
      metadata[key] = values;
    } else {
      const bytes = SCALAR_BYTES[type];
      if (bytes === undefined) throw bad(`"${key}" has value type ${type}, which GGUF does not define`);
      if (pos + bytes > h.loaded) await h.need(pos, pos + bytes, `"${key}"`);
      metadata[key] = scalar(type);
    }
  }

  if (tensorCount * MIN_TENSOR_INFO_BYTES > left()) {
    throw truncated(`it claims ${tensorCount} tensors, at least ${tensorCount * MIN_TENSOR_INFO_BYTES} bytes of tensor infos, ${left()} bytes are left after the metadata`);
  }
  const tensors: RawTensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = await string(`the name of tensor ${i}`, L.tensorNameBytes);
    if (pos + 4 > h.loaded) await h.need(pos, pos + 4, `tensor "${name}"`);
    const dims = u32();
    if (dims < 1 || dims > L.dims) throw bad(`n_dims is ${dims} (1 to ${L.dims})`, name);
    if (pos + 8 * dims + 12 > h.loaded) await h.need(pos, pos + 8 * dims + 12, `tensor "${name}"`);
    const ne: number[] = [];
    for (let d = 0; d < dims; d++) ne.push(u64(`ne[${d}] of "${name}"`));
    if (ne.reduce((a, d) => a * d, 1) > Number.MAX_SAFE_INTEGER) throw bad(`ne = [${ne}] has more than 2^53 elements`, name);
    const typeId = u32();
    tensors.push({ name, ne, typeId, offset: u64(`the data offset of "${name}"`) });
  }

  const alignment = metadata['general.alignment'] ?? 32;
  if (typeof alignment !== 'number' || !Number.isInteger(alignment) || alignment < 1 || alignment > 2 ** 16 || (alignment & (alignment - 1)) !== 0) {
    throw bad(`general.alignment ${JSON.stringify(alignment)} must be a power of two up to 65536`);
  }
  return { version, metadata, tensors, infosEnd: pos, alignment, bytesRead: h.read };
}

/** UTF-8 of a few bytes decoded by hand; null for anything but well-formed 1–4 byte sequences (TextDecoder then replaces). */
function shortUtf8(b: Uint8Array, start: number, end: number): string | null {
  let s = '';
  for (let i = start; i < end;) {
    const c = b[i]!;
    if (c < 0x80) { s += String.fromCharCode(c); i++; continue; }
    let cp: number, n: number, min: number;
    if (c >= 0xc2 && c < 0xe0) { cp = c & 0x1f; n = 1; min = 0x80; }
    else if (c >= 0xe0 && c < 0xf0) { cp = c & 0x0f; n = 2; min = 0x800; }
    else if (c >= 0xf0 && c < 0xf5) { cp = c & 0x07; n = 3; min = 0x10000; }
    else return null;
    if (i + n >= end) return null;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k]!;
      if ((d & 0xc0) !== 0x80) return null;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) return null;
    s += String.fromCodePoint(cp);
    i += n + 1;
  }
  return s;
}
