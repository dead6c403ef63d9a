// Streamed weights into the WASM kernels' memory (issue 25's bound, for the CPU engine): with weights
// from openWeights, every matrix carries a `stream` ref instead of bytes. Before any byte is read, each
// streamed linear part gets its final place in the kernels' memory (rows as stored, back to back, as
// placeLinear lays them) and each streamed small tensor (a GGUF's F32 norms, a hybrid's conv taps and
// gates, which the mixers read in JS) a JS buffer of its exact size. Then the load's pieces are copied
// into those places as they arrive and dropped, so a device holds its weights once plus the load's
// in-flight bound (LOAD_IN_FLIGHT_BYTES), never a JS copy of its share beside the WASM one.
import { EngineUsageError } from '../model/engine-errors.ts';
import type { Linear, ModelWeights, StreamRef, TensorData, WeightPiece } from '../model/types.ts';
import { linearParts } from './formats.ts';
import type { StreamPlaces, WasmKernels } from './wasm-kernels.ts';

/** Bytes [tStart, tEnd) of a file tensor land at `dst` (+ the offset inside the run). */
interface Place { tStart: number; tEnd: number; write(at: number, bytes: Uint8Array): void }

const isLinear = (x: object): x is Linear =>
  'kind' in x && 'rows' in x && 'cols' in x && (x.kind === 'dense' || x.kind === 'ggml' || x.kind === 'q4f16_1');

export class WasmStreamSink implements StreamPlaces {
  /** Where each streamed linear part lives in the kernels' memory, by its stream ref. */
  private readonly reserved = new Map<StreamRef, number>();
  private readonly places = new Map<string, Place[]>();
  /** JS bytes of the streamed small tensors (filled as the pieces come; under 1% of a share). */
  smallBytes = 0;

  constructor(private readonly k: WasmKernels) {}

  /**
   * Gives every streamed tensor in `weights` its place: linears' parts in the kernels' memory, small
   * tensors a JS buffer set as their bytes (their stream ref removed, so the engines read them as loaded).
   */
  reserve(weights: ModelWeights): void {
    const visit = (x: unknown): void => {
      if (x === null || typeof x !== 'object' || x instanceof Uint8Array) return;
      if (Array.isArray(x)) { x.forEach(visit); return; }
      if (isLinear(x)) { this.reserveLinear(x); return; }
      const t = x as Partial<TensorData>;
      if (t.stream && typeof t.name === 'string') { this.reserveSmall(t as TensorData); return; }
      for (const v of Object.values(x)) visit(v);
    };
    for (const layer of weights.layers.values()) visit(layer);
    visit(weights.embedding);
    visit(weights.lmHead);
    visit(weights.finalNorm);
  }

  /** The address placeLinear uses for a streamed part (reserved before the load ran). */
  addressOf(ref: StreamRef, name: string): number {
    const at = this.reserved.get(ref);
    if (at === undefined) throw new EngineUsageError(`streamed tensor "${name}" has no place in the CPU engine's memory (reserve() did not see it)`);
    return at;
  }

  /** Throws unless every byte of every streamed file tensor has exactly one place (before any read). */
  checkCovered(tensors: ReadonlyMap<string, number>): void {
    for (const [name, bytes] of tensors) {
      const list = [...(this.places.get(name) ?? [])].sort((a, b) => a.tStart - b.tStart);
      let at = 0;
      for (const p of list) { if (p.tStart !== at) break; at = p.tEnd; }
      if (at !== bytes) throw new EngineUsageError(`streamed tensor "${name}": the CPU engine placed ${at} of its ${bytes} bytes`);
    }
    for (const name of this.places.keys()) if (!tensors.has(name)) throw new EngineUsageError(`streamed tensor "${name}" is not in the load`);
  }

  /** One piece of a file tensor, copied into every place it goes. */
  write(piece: WeightPiece): void {
    const end = piece.offset + piece.bytes.byteLength;
    for (const p of this.places.get(piece.tensor) ?? []) {
      const lo = Math.max(p.tStart, piece.offset), hi = Math.min(p.tEnd, end);
      if (lo < hi) p.write(lo - p.tStart, piece.bytes.subarray(lo - piece.offset, hi - piece.offset));
    }
  }

  private reserveLinear(l: Linear): void {
    for (const part of linearParts(l)) {
      if (!part.stream || this.reserved.has(part.stream)) continue;
      const at = this.k.alloc(part.stream.byteLength);
      this.reserved.set(part.stream, at);
      // fresh views each write: a memory.grow detaches the old buffer
      this.placeRef(part.stream, (o, b) => this.k.u8(at + o, b.byteLength).set(b));
    }
  }

  private reserveSmall(t: TensorData): void {
    const ref = t.stream!;
    const bytes = new Uint8Array(ref.byteLength);
    this.smallBytes += ref.byteLength;
    this.placeRef(ref, (o, b) => bytes.set(b, o));
    t.bytes = bytes;
    delete t.stream;
  }

  /** The ref's parts (file tensors back to back) each get a place writing at the run's offset. */
  private placeRef(ref: StreamRef, write: (runOffset: number, bytes: Uint8Array) => void): void {
    let runStart = 0;
    for (const part of ref.parts) {
      const base = runStart;
      const list = this.places.get(part.tensor) ?? [];
      list.push({ tStart: 0, tEnd: part.bytes, write: (at, b) => write(base + at, b) });
      this.places.set(part.tensor, list);
      runStart += part.bytes;
    }
  }
}
