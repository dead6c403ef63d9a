// Little-endian byte writer/reader for the room protocol. The reader checks every read against the end
// of the buffer and throws a ProtocolError naming the field, so a short or lying frame never reads past
// its bytes or allocates what its length fields claim before checking them.
import { ProtocolError } from './errors.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export class ByteWriter {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): this { this.room(1); this.view.setUint8(this.at, v); this.at += 1; return this; }
  u16(v: number): this { this.room(2); this.view.setUint16(this.at, v, true); this.at += 2; return this; }
  u32(v: number): this { this.room(4); this.view.setUint32(this.at, v, true); this.at += 4; return this; }
  f64(v: number): this { this.room(8); this.view.setFloat64(this.at, v, true); this.at += 8; return this; }
  /** u16 byte length + UTF-8. */
  str(s: string): this {
    const b = encoder.encode(s);
    if (b.length > 0xffff) throw new ProtocolError(`string of ${b.length} bytes is too long for a frame field`);
    this.u16(b.length);
    return this.raw(b);
  }
  /** u32 byte length + bytes. */
  bytes(b: Uint8Array): this { this.u32(b.length); return this.raw(b); }
  /** u32 element count + f32 LE values. */
  f32s(a: Float32Array): this {
    this.u32(a.length);
    return this.raw(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)); // LE on every browser/Node we run
  }
  raw(b: Uint8Array): this { this.room(b.length); this.buf.set(b, this.at); this.at += b.length; return this; }
  finish(): Uint8Array { return this.buf.slice(0, this.at); }
}

export class ByteReader {
  private at = 0;
  private readonly view: DataView;
  constructor(private readonly buf: Uint8Array, private readonly what: string) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  private need(n: number, field: string): void {
    if (this.at + n > this.buf.length) {
      throw new ProtocolError(`${this.what}: frame ends inside field "${field}" (needs ${n} bytes at ${this.at}, has ${this.buf.length})`);
    }
  }
  u8(field: string): number { this.need(1, field); return this.view.getUint8(this.at++); }
  u16(field: string): number { this.need(2, field); const v = this.view.getUint16(this.at, true); this.at += 2; return v; }
  u32(field: string): number { this.need(4, field); const v = this.view.getUint32(this.at, true); this.at += 4; return v; }
  f64(field: string): number {
    this.need(8, field);
    const v = this.view.getFloat64(this.at, true);
    this.at += 8;
    if (!Number.isFinite(v)) throw new ProtocolError(`${this.what}: field "${field}" is not a finite number`);
    return v;
  }
  str(field: string, maxBytes = 4096): string {
    const n = this.u16(field);
    if (n > maxBytes) throw new ProtocolError(`${this.what}: field "${field}" is ${n} bytes, limit ${maxBytes}`);
    this.need(n, field);
    let s: string;
    try { s = decoder.decode(this.buf.subarray(this.at, this.at + n)); } catch {
      throw new ProtocolError(`${this.what}: field "${field}" is not valid UTF-8`);
    }
    this.at += n;
    return s;
  }
  bytes(field: string): Uint8Array {
    const n = this.u32(field);
    this.need(n, field);
    const out = this.buf.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }
  f32s(field: string): Float32Array {
    const n = this.u32(field);
    this.need(n * 4, field);
    const out = new Float32Array(n);
    new Uint8Array(out.buffer).set(this.buf.subarray(this.at, this.at + n * 4)); // copy: source may be unaligned
    this.at += n * 4;
    return out;
  }
  /** Every byte must be consumed: trailing garbage is a malformed frame. */
  end(): void {
    if (this.at !== this.buf.length) {
      throw new ProtocolError(`${this.what}: ${this.buf.length - this.at} unexpected trailing bytes`);
    }
  }
}
