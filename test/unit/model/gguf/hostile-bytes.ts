// Hand-built GGUF bytes for hostile-file tests: counts and lengths are written as given, not as the
// data holds, so a header can lie (gguf-write.ts always writes the truth).
const enc = new TextEncoder();

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.byteLength; }
  return out;
}

export const u32 = (v: number): Uint8Array => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); return b; };
export const u64 = (v: number | bigint): Uint8Array => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); return b; };
export const str = (s: string): Uint8Array => { const b = enc.encode(s); return concat([u64(b.length), b]); };

/** "GGUF", version 3, tensor_count, kv_count. */
export const fixedHeader = (tensors: number | bigint, kvs: number | bigint): Uint8Array => concat([enc.encode('GGUF'), u32(3), u64(tensors), u64(kvs)]);

export const kvString = (key: string, value: string): Uint8Array => concat([str(key), u32(8), str(value)]);
export const kvU32 = (key: string, value: number): Uint8Array => concat([str(key), u32(4), u32(value)]);
export const kvU64 = (key: string, value: number | bigint): Uint8Array => concat([str(key), u32(10), u64(value)]);
/** An array of `count` u8 elements, all `fill`. */
export const kvU8Array = (key: string, count: number, fill = 1): Uint8Array => concat([str(key), u32(9), u32(0), u64(count), new Uint8Array(count).fill(fill)]);
/** An array header claiming `count` elements of type `of`, followed by `body` (which may hold fewer). */
export const kvArrayClaim = (key: string, of: number, count: number | bigint, body = new Uint8Array(0)): Uint8Array => concat([str(key), u32(9), u32(of), u64(count), body]);

/** A whole GGUF: the fixed header with these counts, the kv pairs, then the raw rest (tensor infos, padding). */
export function gguf(kvs: Uint8Array[], rest: Uint8Array[] = [], tensorCount = 0): Uint8Array {
  return concat([fixedHeader(tensorCount, kvs.length), ...kvs, ...rest]);
}
