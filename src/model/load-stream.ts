// A streamed load: the big tensors of a share (every matrix) go from the source to their consumer in
// slices, never all at once. A format that streams (GGUF) assembles its weights with `stream` refs in
// place of those bytes (types.ts StreamRef) and this file delivers the bytes as pieces:
//   - each streamed tensor's byte range is cut into reads of at most LOAD_SLICE_BYTES (small neighbours
//     merged into one read), read LOAD_IN_FLIGHT_BYTES / LOAD_SLICE_BYTES at a time;
//   - a read's bytes are handed to onPiece tensor by tensor and dropped once onPiece's promise settles,
//     so at most LOAD_IN_FLIGHT_BYTES of weights are ever in flight in JS, whatever the share's size.
// The source may cache a read as it passes (src/room/weight-cache.ts keys the cache by range; the plan is
// deterministic, so a second load of the same share reads the same ranges from the cache).
// materializeWeights fills the bytes in for a consumer that must hold them (the reference engine): each
// tensor is allocated once at its final size and the pieces are copied into it, so its peak is its
// resident weights plus the bound, never the weights twice.
import { TruncatedFileError } from './errors.ts';
import { ARRIVAL_REPORT_MS, planReads, type Located, type PreparedLoad } from './load-plan.ts';
import type { LoadProgress, ModelSource, ModelWeights, PendingWeights, StreamRef, WeightPiece, WeightRequest } from './types.ts';

/**
 * The most weight bytes a load holds in JS at once (reads in flight and not yet consumed). The deal counts
 * it on every device as the load's own peak (src/room/device-bytes.ts LOAD_PEAK_BYTES is this constant).
 */
export const LOAD_IN_FLIGHT_BYTES = 64 * 2 ** 20;
/** One read of a streamed load: four of them fill the in-flight bound. */
export const LOAD_SLICE_BYTES = 16 * 2 ** 20;

interface Slice { file: string; start: number; end: number; tensors: Located[] }

/** The streamed tensors' bytes as reads of at most LOAD_SLICE_BYTES, in file order. */
function slicesOf(located: readonly Located[]): Slice[] {
  const byName = new Map(located.map((l) => [l.name, l]));
  const slices: Slice[] = [];
  for (const r of planReads(located, { maxReadBytes: LOAD_SLICE_BYTES })) {
    const tensors = r.tensors.map((n) => byName.get(n)!);
    for (let s = r.start; s < r.end; s += LOAD_SLICE_BYTES) {
      const e = Math.min(r.end, s + LOAD_SLICE_BYTES);
      slices.push({ file: r.file, start: s, end: e, tensors: tensors.filter((t) => t.start < e && t.end > s) });
    }
  }
  return slices;
}

/** The bytes of a streamed load, deliverable once (PendingWeights). */
export function pendingWeights(
  source: ModelSource, p: PreparedLoad, streamed: ReadonlySet<string>, request: WeightRequest, progress: LoadProgress,
): PendingWeights {
  const located = [...streamed].map((n) => p.located.get(n)!);
  const tensors = new Map(located.map((l) => [l.name, l.end - l.start]));
  let started = false;
  let inFlight = 0;
  let peak = 0;
  const run = async (onPiece: (piece: WeightPiece) => void | Promise<void>): Promise<void> => {
    if (started) throw new Error('a streamed load delivers its bytes once: open the weights again to read them again');
    started = true;
    const slices = slicesOf(located);
    const concurrency = Math.max(1, Math.floor(LOAD_IN_FLIGHT_BYTES / LOAD_SLICE_BYTES));
    let next = 0;
    let failed = false;                      // after one failure, start no further reads
    // Bytes of the slices in flight that have arrived but are not delivered yet: progress counts them, so
    // a slow link shows its bytes coming in instead of 0% until a whole 16 MiB slice is in.
    let arriving = 0;
    let reportedAt = 0;
    const reportArrival = (): void => {
      const now = Date.now();
      if (now - reportedAt < ARRIVAL_REPORT_MS) return;
      reportedAt = now;
      request.onProgress?.({ ...progress, bytesDone: progress.bytesDone + arriving });
    };
    const one = async (s: Slice): Promise<void> => {
      request.signal?.throwIfAborted();
      inFlight += s.end - s.start;
      peak = Math.max(peak, inFlight);
      let arrived = 0;
      try {
        let bytes: Uint8Array;
        try {
          bytes = await source.readRange(s.file, s.start, s.end, (n) => {
            const add = Math.min(n, s.end - s.start - arrived);   // never past the slice, whatever a source says
            arrived += add;
            arriving += add;
            reportArrival();
          });
        } catch (e) {
          if (!(e instanceof TruncatedFileError) || e.tensor) throw e;
          const t = s.tensors.find((x) => x.end > (e.fileSize ?? s.start)) ?? s.tensors[0]!;
          throw new TruncatedFileError(`the file ends inside this tensor's bytes [${t.start}, ${t.end})`, { file: t.file, tensor: t.name, cause: e });
        }
        for (const t of s.tensors) {
          if (failed) return;
          const lo = Math.max(t.start, s.start), hi = Math.min(t.end, s.end);
          await onPiece({ tensor: t.name, offset: lo - t.start, bytes: bytes.subarray(lo - s.start, hi - s.start) });
          progress.bytesDone += hi - lo;
          const counted = Math.min(arrived, hi - lo);   // now delivered: no longer counted as arriving
          arrived -= counted;
          arriving -= counted;
          if (hi === t.end) progress.tensorsDone++;
        }
        request.onProgress?.({ ...progress, bytesDone: progress.bytesDone + arriving });
      } finally {
        inFlight -= s.end - s.start;
        arriving -= arrived;
      }
    };
    const runners = Array.from({ length: Math.min(concurrency, slices.length) }, async () => {
      while (!failed && next < slices.length) {
        try {
          await one(slices[next++]!);
        } catch (e) {
          failed = true;
          throw e;
        }
      }
    });
    const results = await Promise.allSettled(runners);   // every read settled before the caller cleans up
    const bad = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (bad) throw bad.reason;
    request.signal?.throwIfAborted();
  };
  return { tensors, run, get peakInFlightBytes() { return peak; } };
}

/** An object in the weights that holds bytes (TensorData or GgmlSegment). */
interface Holder { bytes: Uint8Array; stream?: StreamRef }

/** Every streamed byte holder in `w` (once each: a tied head is the embedding's own object). */
export function streamedHolders(w: ModelWeights): Holder[] {
  const out = new Set<Holder>();
  const seen = new Set<object>();
  const walk = (x: unknown): void => {
    if (x === null || typeof x !== 'object' || ArrayBuffer.isView(x) || seen.has(x)) return;
    seen.add(x);
    if (x instanceof Map) { for (const v of x.values()) walk(v); return; }
    if (Array.isArray(x)) { x.forEach(walk); return; }
    const o = x as Record<string, unknown>;
    if (o.stream && o.bytes instanceof Uint8Array) out.add(o as unknown as Holder);
    for (const [k, v] of Object.entries(o)) if (k !== 'config' && k !== 'pending' && k !== 'stream') walk(v);
  };
  walk(w);
  return [...out];
}

/** Bytes of a tensor's data, streamed or held. */
export function heldOrStreamedBytes(h: Holder): number {
  return h.stream ? h.stream.byteLength : h.bytes.byteLength;
}

/**
 * The weights with every streamed tensor's bytes in JS: each allocated once, the pieces copied in.
 * Weights without `pending` are returned as they are. Mutates and returns `w`.
 */
export async function materializeWeights(w: ModelWeights): Promise<ModelWeights> {
  const pending = w.pending;
  if (!pending) return w;
  const holders = streamedHolders(w);
  const targets = new Map<string, { dst: Uint8Array; at: number }[]>();
  const filled = holders.map((h) => {
    const dst = new Uint8Array(h.stream!.byteLength);
    let at = 0;
    for (const part of h.stream!.parts) {
      if (pending.tensors.get(part.tensor) !== part.bytes) throw new Error(`streamed tensor "${part.tensor}": ${part.bytes} bytes expected, the load has ${pending.tensors.get(part.tensor)}`);
      targets.set(part.tensor, [...(targets.get(part.tensor) ?? []), { dst, at }]);
      at += part.bytes;
    }
    return dst;
  });
  await pending.run((piece) => {
    for (const t of targets.get(piece.tensor) ?? []) t.dst.set(piece.bytes, t.at + piece.offset);
  });
  holders.forEach((h, i) => { h.bytes = filled[i]!; delete h.stream; });
  delete w.pending;
  return w;
}
