// Seeded generator of hostile wire messages, shared by the Node fuzz test and the browser fuzz e2e:
// random bytes, valid headers over random payloads, and valid frames mutated (bit flips, truncation,
// appended bytes, lying length fields, swapped kind codes, oversized counts).
import { encodeFrame, type Frame } from './protocol.ts';
import { chunkFrame, WIRE_HEADER } from './wire.ts';

/** mulberry32: tiny seeded PRNG (fuzzing only). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sample frames of every kind (valid), the seeds of mutation. */
export function sampleFrames(hiddenSize = 8): Frame[] {
  const h = new Float32Array(hiddenSize * 2).map((_, i) => i / 7);
  return [
    { kind: 'heartbeat', reply: false, sentAt: 12.5 },
    { kind: 'progress', epoch: 1, bytesDone: 10, bytesTotal: 100, tensorsDone: 1, tensorsTotal: 9, networkBytes: 10, cacheBytes: 0 },
    { kind: 'ready', epoch: 1, networkBytes: 100, cacheBytes: 0, ms: 5 },
    { kind: 'forward', epoch: 1, seq: 1, range: [0, 2], position: 0, count: 2, hidden: h },
    { kind: 'result', epoch: 1, seq: 1, kvLength: 2, hidden: h },
    { kind: 'checkpoint', epoch: 1, seq: 2, op: 'truncate', position: 1 },
    // A hybrid's recurrent-state ops (a dense guest takes pin / release as no-ops, restore as truncate).
    { kind: 'checkpoint', epoch: 1, seq: 2, op: 'pin', position: 2 },
    { kind: 'checkpoint', epoch: 1, seq: 3, op: 'restore', position: 1 },
    { kind: 'checkpoint', epoch: 1, seq: 4, op: 'release', position: 2 },
    { kind: 'ack', epoch: 1, seq: 2, kvLength: 1 },
    { kind: 'error', seq: 0, code: 'x', message: 'y' },
    { kind: 'read', id: 1, op: 'range', path: 'model.safetensors', start: 0, end: 8 },
    { kind: 'data', id: 1, ok: true, message: '', bytes: new Uint8Array([1, 2, 3]) },
    { kind: 'bye', reason: 'fuzz' },
    { kind: 'link-lost', epoch: 1, peer: 'guest002', reason: 'fuzz' },
    { kind: 'skip', epoch: 1, seq: 3 },
  ];
}

function randomBytes(rand: () => number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

/**
 * `count` hostile wire messages. Frame numbers start at `frameNo0`. `keep` filters the seed frames (a
 * test can leave out kinds whose valid mutations would legitimately change state, e.g. `bye`).
 */
export function fuzzMessages(seed: number, count: number, seeds: Frame[] = sampleFrames(), frameNo0 = 1_000_000): Uint8Array[] {
  const rand = seededRandom(seed);
  const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)]!;
  const encoded = seeds.map((f) => encodeFrame(f));
  const out: Uint8Array[] = [];
  let frameNo = frameNo0;
  for (let i = 0; i < count; i++) {
    const mode = Math.floor(rand() * 6);
    if (mode === 0) { out.push(randomBytes(rand, Math.floor(rand() * 64))); continue; }
    let frame: Uint8Array = pick(encoded).slice();
    if (mode === 1) frame = randomBytes(rand, 1 + Math.floor(rand() * 80));
    else if (mode === 2) { for (let k = 0; k < 1 + rand() * 4; k++) frame[Math.floor(rand() * frame.length)] ^= 1 << Math.floor(rand() * 8); }
    else if (mode === 3) frame = frame.subarray(0, Math.floor(rand() * frame.length));
    else if (mode === 4) { const more = new Uint8Array(frame.length + 1 + Math.floor(rand() * 8)); more.set(frame); frame = more; }
    else if (frame.length > 5) {
      // Lie in a u32 length/count field: overwrite 4 bytes near the end with a huge value.
      const at = Math.max(1, frame.length - 4 - Math.floor(rand() * Math.min(16, frame.length - 4)));
      new DataView(frame.buffer, frame.byteOffset).setUint32(at, 0xfffffff0 - Math.floor(rand() * 1000), true);
    }
    const msgs = chunkFrame(frame, frameNo++);
    const msg = msgs[0]!;
    // Sometimes break the wire header itself.
    const headerHit = rand();
    if (headerHit < 0.1) msg[Math.floor(rand() * WIRE_HEADER)] ^= 0xff;
    else if (headerHit < 0.15) msg[3] = 0; // claims more chunks follow: the next message must not continue it
    out.push(msg);
  }
  return out;
}
