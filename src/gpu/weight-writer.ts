// Streamed weights into GPU buffers (src/model/load-stream.ts delivers them). While an engine is made
// from weights with `pending`, the uploaders create each weight buffer empty (WebGPU zero-fills it) and
// say here where a run of a file tensor's bytes goes: tensor bytes [tStart, tEnd) to `buffer` at `dst`,
// row by row (rows of rowBytes placed every rowStride: dense rows are padded to 16 bytes on the device).
// Then each piece is written with queue.writeBuffer into every place it goes and dropped. writeBuffer
// wants 4-byte offsets and sizes, but ggml rows are only 2-byte aligned (Q6_K: 210-byte blocks), so the
// bytes of a piece's unaligned ends wait here, a word at a time, until the neighbouring piece completes
// the word; words still partial at the end are padding (zero) beyond the data and are written as they are.
// Every `LOAD_IN_FLIGHT_BYTES` written, the queue is flushed and awaited, so the driver's staging copies
// stay within the same bound as the JS side.
import { LOAD_IN_FLIGHT_BYTES } from '../model/load-stream.ts';
import type { StreamRef, WeightPiece } from '../model/types.ts';
import { EngineUsageError } from '../model/engine-errors.ts';

interface Place { tStart: number; tEnd: number; buffer: GPUBuffer; dst: number; rowBytes: number; rowStride: number }

/** The writer of the engine being made on a device, while its uploaders run (see streamWriter). */
const active = new WeakMap<GPUDevice, WeightWriter>();

export class WeightWriter {
  private readonly places = new Map<string, Place[]>();
  private readonly partial = new Map<GPUBuffer, Map<number, { bytes: Uint8Array; mask: number }>>();
  private sinceFlush = 0;

  constructor(readonly device: GPUDevice) {}

  /**
   * Bytes [mStart, mEnd) of the matrix `ref` describes (its parts back to back) go to `buffer` at `dst`,
   * rows of rowBytes every rowStride. The range starts on a row and each part is whole rows.
   */
  place(ref: StreamRef, mStart: number, mEnd: number, buffer: GPUBuffer, dst: number, rowBytes: number, rowStride = rowBytes): void {
    let partStart = 0;
    for (const part of ref.parts) {
      const lo = Math.max(mStart, partStart), hi = Math.min(mEnd, partStart + part.bytes);
      if (lo < hi) {
        const rowsBefore = (lo - mStart) / rowBytes;
        const list = this.places.get(part.tensor) ?? [];
        list.push({ tStart: lo - partStart, tEnd: hi - partStart, buffer, dst: dst + rowsBefore * rowStride, rowBytes, rowStride });
        this.places.set(part.tensor, list);
      }
      partStart += part.bytes;
    }
  }

  /** Throws unless every byte of every streamed tensor has exactly one place (checked before any read). */
  checkCovered(tensors: ReadonlyMap<string, number>): void {
    for (const [name, bytes] of tensors) {
      const list = [...(this.places.get(name) ?? [])].sort((a, b) => a.tStart - b.tStart);
      let at = 0;
      for (const p of list) {
        if (p.tStart !== at) break;
        at = p.tEnd;
      }
      if (at !== bytes || list.length === 0 && bytes > 0) {
        throw new EngineUsageError(`streamed tensor "${name}": the engine placed ${at} of its ${bytes} bytes (an uploader that does not stream?)`);
      }
    }
    for (const name of this.places.keys()) if (!tensors.has(name)) throw new EngineUsageError(`streamed tensor "${name}" is not in the load`);
  }

  /** Write one piece into every place its bytes go; flush the queue every LOAD_IN_FLIGHT_BYTES. */
  async write(piece: WeightPiece): Promise<void> {
    const a = piece.offset, b = piece.offset + piece.bytes.byteLength;
    for (const p of this.places.get(piece.tensor) ?? []) {
      const lo = Math.max(a, p.tStart), hi = Math.min(b, p.tEnd);
      if (lo >= hi) continue;
      if (p.rowStride === p.rowBytes) {
        this.writeAt(p.buffer, p.dst + (lo - p.tStart), piece.bytes.subarray(lo - a, hi - a));
        continue;
      }
      for (let x = lo; x < hi;) {
        const rel = x - p.tStart, row = Math.floor(rel / p.rowBytes), inRow = rel - row * p.rowBytes;
        const n = Math.min(hi - x, p.rowBytes - inRow);
        this.writeAt(p.buffer, p.dst + row * p.rowStride + inRow, piece.bytes.subarray(x - a, x - a + n));
        x += n;
      }
    }
    this.sinceFlush += piece.bytes.byteLength;
    if (this.sinceFlush >= LOAD_IN_FLIGHT_BYTES) await this.flush();
  }

  /** Write the words still partial (their missing bytes are zero padding) and wait for the queue. */
  async finish(): Promise<void> {
    for (const [buffer, words] of this.partial) for (const [word, w] of words) this.device.queue.writeBuffer(buffer, word * 4, w.bytes as Uint8Array<ArrayBuffer>);
    this.partial.clear();
    await this.flush();
  }

  private async flush(): Promise<void> {
    this.sinceFlush = 0;
    this.device.queue.submit([]);
    await this.device.queue.onSubmittedWorkDone();
  }

  private writeAt(buffer: GPUBuffer, dst: number, bytes: Uint8Array): void {
    const n = bytes.byteLength;
    let s = 0;
    while (s < n && (dst + s) % 4 !== 0) this.edge(buffer, dst + s, bytes[s]!), s++;
    const body = s + Math.floor((n - s) / 4) * 4;
    if (body > s) this.device.queue.writeBuffer(buffer, dst + s, bytes as Uint8Array<ArrayBuffer>, s, body - s);
    for (let i = body; i < n; i++) this.edge(buffer, dst + i, bytes[i]!);
  }

  /** One byte of a word a piece only partly covers: kept until the word is whole, then written. */
  private edge(buffer: GPUBuffer, at: number, value: number): void {
    let words = this.partial.get(buffer);
    if (!words) this.partial.set(buffer, (words = new Map()));
    const word = at >>> 2;
    let w = words.get(word);
    if (!w) words.set(word, (w = { bytes: new Uint8Array(4), mask: 0 }));
    w.bytes[at & 3] = value;
    w.mask |= 1 << (at & 3);
    if (w.mask === 15) {
      this.device.queue.writeBuffer(buffer, word * 4, w.bytes as Uint8Array<ArrayBuffer>);
      words.delete(word);
    }
  }
}

/** Run `make` with `writer` as the device's streamed-upload target (one engine at a time per device). */
export function withWriter<T>(writer: WeightWriter, make: () => T): T {
  if (active.has(writer.device)) throw new EngineUsageError('createWebGPUEngine: another streamed load is making an engine on this device');
  active.set(writer.device, writer);
  try {
    return make();
  } finally {
    active.delete(writer.device);
  }
}

/** The writer a streamed tensor's upload on `device` registers with; throws outside a streamed load. */
export function writerOf(device: GPUDevice, name: string): WeightWriter {
  const w = active.get(device);
  if (!w) throw new EngineUsageError(`tensor "${name}" is streamed (weights from openWeights) but no streamed load is making an engine on this device`);
  return w;
}
