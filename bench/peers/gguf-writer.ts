// A minimal GGUF v3 writer for the peer bench: metadata (strings, integers, floats, string arrays) and
// tensors already encoded in their ggml type, streamed to a file. Layout (ggml's gguf.cpp): magic, version,
// counts, key/values, tensor infos (name, dims innermost first, type, offset), padding to the alignment,
// data. Dimensions: a row-major [N, K] matrix is ne = [K, N].
import { closeSync, openSync, writeSync } from 'node:fs';

export const GGML_TYPE = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8, Q4_K: 12, BF16: 30 } as const;

const ALIGN = 32;

type Meta = string | number | boolean | { u32: number } | { f32: number } | string[];

export interface GgufTensor {
  name: string;
  ne: number[];                // innermost first
  type: number;
  data: Uint8Array;
}

class Bytes {
  private parts: Uint8Array[] = [];
  length = 0;
  push(b: Uint8Array): void { this.parts.push(b); this.length += b.length; }
  u32(v: number): void { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); this.push(b); }
  i32(v: number): void { const b = new Uint8Array(4); new DataView(b.buffer).setInt32(0, v, true); this.push(b); }
  u64(v: number): void { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); this.push(b); }
  f32(v: number): void { const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, v, true); this.push(b); }
  str(s: string): void { const b = new TextEncoder().encode(s); this.u64(b.length); this.push(b); }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}

function writeValue(b: Bytes, v: Meta): void {
  if (typeof v === 'string') { b.u32(8); b.str(v); return; }
  if (typeof v === 'boolean') { b.u32(7); b.push(new Uint8Array([v ? 1 : 0])); return; }
  if (typeof v === 'number') { b.u32(5); b.i32(v); return; }          // INT32
  if (Array.isArray(v)) { b.u32(9); b.u32(8); b.u64(v.length); v.forEach((s) => b.str(s)); return; }
  if ('u32' in v) { b.u32(4); b.u32(v.u32); return; }
  b.u32(6); b.f32(v.f32);
}

/** Write a GGUF file of `meta` and `tensors` (each tensor's data starts on a 32-byte boundary). */
export function writeGguf(path: string, meta: Record<string, Meta>, tensors: GgufTensor[]): number {
  const head = new Bytes();
  head.push(new TextEncoder().encode('GGUF'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(Object.keys(meta).length);
  for (const [k, v] of Object.entries(meta)) { head.str(k); writeValue(head, v); }
  let offset = 0;
  for (const t of tensors) {
    head.str(t.name);
    head.u32(t.ne.length);
    t.ne.forEach((d) => head.u64(d));
    head.u32(t.type);
    head.u64(offset);
    offset += Math.ceil(t.data.length / ALIGN) * ALIGN;
  }
  const fd = openSync(path, 'w');
  try {
    const h = head.concat();
    writeSync(fd, h);
    writeSync(fd, new Uint8Array((ALIGN - (h.length % ALIGN)) % ALIGN));
    for (const t of tensors) {
      for (let o = 0; o < t.data.length; o += 1 << 26) writeSync(fd, t.data.subarray(o, Math.min(t.data.length, o + (1 << 26))));
      writeSync(fd, new Uint8Array((ALIGN - (t.data.length % ALIGN)) % ALIGN));
    }
  } finally {
    closeSync(fd);
  }
  return offset;
}
