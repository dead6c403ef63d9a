// A GGUF v3 writer (little-endian), for tiny test models and for tests of the reader:
//   "GGUF" | u32 version 3 | u64 tensor_count | u64 kv_count | kv pairs | tensor infos | pad | data
// kv: string key (u64 length + UTF-8), u32 value type, value; arrays: u32 element type, u64 count, items.
// tensor info: name, u32 n_dims, u64 ne[n_dims] (ne[0] contiguous), u32 ggml type, u64 offset from
// the data section's start. The data section starts at the next multiple of general.alignment (32)
// after the infos, and every tensor's offset is a multiple of it too (zero padding between).

import type { GgmlType } from '../../types.ts';
import { GGML_TYPES, ggmlRowBytes } from './ggml-types.ts';

export const GGUF_DEFAULT_ALIGNMENT = 32;

/** GGUF value type codes (gguf.h enum gguf_type). */
export const GGUF_VALUE = {
  UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9,
  UINT64: 10, INT64: 11, FLOAT64: 12,
} as const;

export type GgufScalarKind = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'bool' | 'string' | 'u64' | 'i64' | 'f64';
export type GgufValue =
  | { kind: GgufScalarKind; value: number | bigint | boolean | string }
  | { kind: 'array'; of: GgufScalarKind; values: readonly (number | bigint | boolean | string)[] };

export interface GgufTensorToWrite {
  name: string;
  type: GgmlType;
  ne: number[];                // ne[0] = the contiguous axis (K of a [N, K] matrix)
  bytes: Uint8Array;           // exactly ne[1]·…·rowBytes(ne[0])
}

const CODE: Record<GgufScalarKind, number> = {
  u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, u64: 10, i64: 11, f64: 12,
};

class Writer {
  private chunks: Uint8Array[] = [];
  private cur = new Uint8Array(1 << 16);
  private at = 0;
  length = 0;
  private view = new DataView(this.cur.buffer);
  private room(n: number): void {
    if (this.at + n <= this.cur.length) return;
    this.chunks.push(this.cur.subarray(0, this.at));
    this.cur = new Uint8Array(Math.max(1 << 16, n));
    this.view = new DataView(this.cur.buffer);
    this.at = 0;
  }
  u8(v: number) { this.room(1); this.view.setUint8(this.at, v); this.at += 1; this.length += 1; }
  u32(v: number) { this.room(4); this.view.setUint32(this.at, v, true); this.at += 4; this.length += 4; }
  u64(v: number | bigint) { this.room(8); this.view.setBigUint64(this.at, BigInt(v), true); this.at += 8; this.length += 8; }
  bytes(b: Uint8Array) { this.room(b.length); this.cur.set(b, this.at); this.at += b.length; this.length += b.length; }
  str(s: string) { const b = new TextEncoder().encode(s); this.u64(b.length); this.bytes(b); }
  scalar(kind: GgufScalarKind, v: number | bigint | boolean | string) {
    const n = kind === 'u8' || kind === 'i8' || kind === 'bool' ? 1 : kind === 'u16' || kind === 'i16' ? 2
      : kind === 'u64' || kind === 'i64' || kind === 'f64' ? 8 : 4;
    if (kind === 'string') { this.str(String(v)); return; }
    this.room(n);
    const d = this.view, o = this.at;
    switch (kind) {
      case 'u8': d.setUint8(o, Number(v)); break;
      case 'i8': d.setInt8(o, Number(v)); break;
      case 'bool': d.setUint8(o, v ? 1 : 0); break;
      case 'u16': d.setUint16(o, Number(v), true); break;
      case 'i16': d.setInt16(o, Number(v), true); break;
      case 'u32': d.setUint32(o, Number(v), true); break;
      case 'i32': d.setInt32(o, Number(v), true); break;
      case 'f32': d.setFloat32(o, Number(v), true); break;
      case 'u64': d.setBigUint64(o, BigInt(v as number | bigint), true); break;
      case 'i64': d.setBigInt64(o, BigInt(v as number | bigint), true); break;
      case 'f64': d.setFloat64(o, Number(v), true); break;
    }
    this.at += n;
    this.length += n;
  }
  pad(alignment: number) { const n = (alignment - (this.length % alignment)) % alignment; this.bytes(new Uint8Array(n)); }
  done(): Uint8Array {
    this.chunks.push(this.cur.subarray(0, this.at));
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const c of this.chunks) { out.set(c, o); o += c.length; }
    return out;
  }
}

/** Bytes a tensor of `type` and shape `ne` holds. */
export function ggufTensorBytes(type: GgmlType, ne: readonly number[]): number {
  return ne.slice(1).reduce((a, d) => a * d, 1) * ggmlRowBytes(type, ne[0]!);
}

/** A tensor's place in a GGUF header: its name, type and shape (its bytes follow in the data section). */
export type GgufTensorHeaderEntry = Omit<GgufTensorToWrite, 'bytes'>;

/**
 * Encode a GGUF header (magic, counts, metadata, tensor infos, padding to the data section) and say how
 * many bytes the data section holds: a header-only or sparse file of a model's real size needs no weights.
 */
export function encodeGgufHeader(metadata: ReadonlyArray<[string, GgufValue]>, tensors: readonly GgufTensorHeaderEntry[]): { header: Uint8Array; dataBytes: number } {
  const w = headerWriter(metadata, tensors);
  return { header: w.writer.done(), dataBytes: w.dataBytes };
}

function alignmentOf(metadata: ReadonlyArray<[string, GgufValue]>): number {
  const alignEntry = metadata.find(([k]) => k === 'general.alignment');
  return alignEntry && alignEntry[1].kind !== 'array' ? Number(alignEntry[1].value) : GGUF_DEFAULT_ALIGNMENT;
}

function headerWriter(metadata: ReadonlyArray<[string, GgufValue]>, tensors: readonly GgufTensorHeaderEntry[]): { writer: Writer; dataBytes: number } {
  const alignment = alignmentOf(metadata);
  const w = new Writer();
  w.bytes(new TextEncoder().encode('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, v] of metadata) {
    w.str(key);
    if (v.kind === 'array') {
      w.u32(GGUF_VALUE.ARRAY);
      w.u32(CODE[v.of]);
      w.u64(v.values.length);
      for (const item of v.values) w.scalar(v.of, item);
    } else {
      w.u32(CODE[v.kind]);
      w.scalar(v.kind, v.value);
    }
  }
  let offset = 0;
  for (const t of tensors) {
    const want = ggufTensorBytes(t.type, t.ne);
    w.str(t.name);
    w.u32(t.ne.length);
    for (const d of t.ne) w.u64(d);
    w.u32(GGML_TYPES[t.type].id);
    w.u64(offset);
    offset += want + ((alignment - (want % alignment)) % alignment);
  }
  w.pad(alignment);
  return { writer: w, dataBytes: offset };
}

/** Encode a whole GGUF file. Metadata keys are written in the order given. */
export function encodeGguf(metadata: ReadonlyArray<[string, GgufValue]>, tensors: readonly GgufTensorToWrite[]): Uint8Array {
  for (const t of tensors) {
    const want = ggufTensorBytes(t.type, t.ne);
    if (t.bytes.byteLength !== want) throw new RangeError(`gguf: tensor ${t.name} has ${t.bytes.byteLength} bytes, ${t.type} [${t.ne}] needs ${want}`);
  }
  const alignment = alignmentOf(metadata);
  const { writer: w } = headerWriter(metadata, tensors);
  for (const t of tensors) {
    w.bytes(t.bytes);
    w.pad(alignment);
  }
  return w.done();
}
