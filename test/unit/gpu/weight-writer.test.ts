// WeightWriter (src/gpu/weight-writer.ts) on a recording queue, no GPU: pieces cut at odd offsets land
// byte-exact where their places say (2-byte-aligned ggml rows, padded dense rows, two tensors sharing a
// buffer as an expert chunk's gate and up do), every writeBuffer it issues is 4-byte aligned in offset and
// size as WebGPU requires, and a tensor with bytes no place covers is refused before any read.
import { describe, expect, it } from 'vitest';
import { WeightWriter } from '../../../src/gpu/weight-writer.ts';
import type { StreamRef } from '../../../src/model/types.ts';

/** A device whose queue writes into plain byte arrays (one per buffer) and records each call's alignment. */
function recordingDevice() {
  const memory = new Map<object, Uint8Array>();
  const calls: { offset: number; size: number }[] = [];
  const device = {
    queue: {
      writeBuffer(buffer: object, offset: number, data: Uint8Array, dataOffset = 0, size = data.byteLength - dataOffset) {
        calls.push({ offset, size });
        memory.get(buffer)!.set(data.subarray(dataOffset, dataOffset + size), offset);
      },
      submit() { /* nothing queued on a recording device */ },
      onSubmittedWorkDone: async () => undefined,
    },
  } as unknown as GPUDevice;
  const buffer = (size: number): GPUBuffer => { const b = {}; memory.set(b, new Uint8Array(size)); return b as GPUBuffer; };
  return { device, buffer, bytesOf: (b: GPUBuffer) => memory.get(b)!, calls };
}

/** Deterministic bytes, none zero (so a byte left unwritten shows). */
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; out[i] = 1 + ((s >>> 16) % 255); }
  return out;
}

/** Feed `data` of `tensor` to the writer in pieces cut at `cuts` (offsets, ascending), in a shuffled order. */
async function feed(w: WeightWriter, tensor: string, data: Uint8Array, cuts: number[]): Promise<void> {
  const edges = [0, ...cuts, data.byteLength];
  const pieces = edges.slice(1).map((end, i) => ({ tensor, offset: edges[i]!, bytes: data.subarray(edges[i]!, end) }));
  for (const i of [1, 3, 0, 2, 4, 5, 6].filter((j) => j < pieces.length)) await w.write(pieces[i]!);
  for (let i = 7; i < pieces.length; i++) await w.write(pieces[i]!);
}

const ref = (...parts: [string, number][]): StreamRef => ({ parts: parts.map(([tensor, b]) => ({ tensor, bytes: b })), byteLength: parts.reduce((a, [, b]) => a + b, 0) });

describe('WeightWriter', () => {
  it('2-byte-aligned rows (Q6_K-like 210-byte rows) split over two chunks arrive byte-exact, every write aligned', async () => {
    const { device, buffer, bytesOf, calls } = recordingDevice();
    const w = new WeightWriter(device);
    const rowBytes = 210, rows = 7, data = bytes(rows * rowBytes, 3);
    const r = ref(['t', data.byteLength]);
    const a = buffer(4 * rowBytes + 16), b = buffer(3 * rowBytes + 16 + 2);
    w.place(r, 0, 4 * rowBytes, a, 0, rowBytes);
    w.place(r, 4 * rowBytes, 7 * rowBytes, b, 0, rowBytes);
    w.checkCovered(new Map([['t', data.byteLength]]));
    await feed(w, 't', data, [1, 211, 399, 421, 841, 1001, 1233]);
    await w.finish();
    expect([...bytesOf(a).subarray(0, 4 * rowBytes)]).toEqual([...data.subarray(0, 4 * rowBytes)]);
    expect([...bytesOf(b).subarray(0, 3 * rowBytes)]).toEqual([...data.subarray(4 * rowBytes)]);
    expect(bytesOf(a).subarray(4 * rowBytes).every((x) => x === 0)).toBe(true);   // the tail stays zero
    expect(calls.every((c) => c.offset % 4 === 0 && c.size % 4 === 0)).toBe(true);
  });

  it('dense rows padded to 16 bytes on the device: each row at its stride, the padding zero', async () => {
    const { device, buffer, bytesOf } = recordingDevice();
    const w = new WeightWriter(device);
    const rowBytes = 10, stride = 16, rows = 5, data = bytes(rows * rowBytes, 9);
    const buf = buffer(rows * stride);
    w.place(ref(['d', data.byteLength]), 0, data.byteLength, buf, 0, rowBytes, stride);
    await feed(w, 'd', data, [3, 17, 33]);
    await w.finish();
    for (let r = 0; r < rows; r++) {
      expect([...bytesOf(buf).subarray(r * stride, r * stride + rowBytes)]).toEqual([...data.subarray(r * rowBytes, (r + 1) * rowBytes)]);
      expect(bytesOf(buf).subarray(r * stride + rowBytes, (r + 1) * stride).every((x) => x === 0)).toBe(true);
    }
  });

  it('an expert chunk: expert e\'s gate rows then its up rows, from two tensors into one buffer', async () => {
    const { device, buffer, bytesOf, calls } = recordingDevice();
    const w = new WeightWriter(device);
    const E = 3, rowsPer = 2, rowBytes = 34;                  // Q8_0-like rows: 34 bytes, 2-byte aligned
    const gate = bytes(E * rowsPer * rowBytes, 1), up = bytes(E * rowsPer * rowBytes, 2);
    const expertBytes = 2 * rowsPer * rowBytes;
    const buf = buffer(E * expertBytes + 16);
    for (let e = 0; e < E; e++) {
      w.place(ref(['gate', gate.byteLength]), e * rowsPer * rowBytes, (e + 1) * rowsPer * rowBytes, buf, e * expertBytes, rowBytes);
      w.place(ref(['up', up.byteLength]), e * rowsPer * rowBytes, (e + 1) * rowsPer * rowBytes, buf, e * expertBytes + rowsPer * rowBytes, rowBytes);
    }
    w.checkCovered(new Map([['gate', gate.byteLength], ['up', up.byteLength]]));
    await feed(w, 'up', up, [5, 67, 101]);
    await feed(w, 'gate', gate, [1, 69, 135]);
    await w.finish();
    for (let e = 0; e < E; e++) {
      const at = e * expertBytes, n = rowsPer * rowBytes;
      expect([...bytesOf(buf).subarray(at, at + n)]).toEqual([...gate.subarray(e * n, (e + 1) * n)]);
      expect([...bytesOf(buf).subarray(at + n, at + 2 * n)]).toEqual([...up.subarray(e * n, (e + 1) * n)]);
    }
    expect(calls.every((c) => c.offset % 4 === 0 && c.size % 4 === 0)).toBe(true);
  });

  it('a fused matrix of two tensors (q | k) placed by matrix offsets lands each part after the other', async () => {
    const { device, buffer, bytesOf } = recordingDevice();
    const w = new WeightWriter(device);
    const q = bytes(6 * 18, 4), k = bytes(2 * 18, 5);           // Q4_0-like 18-byte rows
    const r = ref(['q', q.byteLength], ['k', k.byteLength]);
    const buf = buffer(q.byteLength + k.byteLength + 16);
    w.place(r, 0, r.byteLength, buf, 0, 18);
    await feed(w, 'k', k, [7]);
    await feed(w, 'q', q, [19, 50]);
    await w.finish();
    expect([...bytesOf(buf).subarray(0, q.byteLength + k.byteLength)]).toEqual([...q, ...k]);
  });

  it('a streamed tensor no place covers (or covers in part) is refused before any byte is read', () => {
    const { device, buffer } = recordingDevice();
    const w = new WeightWriter(device);
    w.place(ref(['a', 40]), 0, 20, buffer(20), 0, 10);
    expect(() => w.checkCovered(new Map([['a', 40]]))).toThrow(/placed 20 of its 40 bytes/);
    expect(() => new WeightWriter(device).checkCovered(new Map([['b', 8]]))).toThrow(/placed 0 of its 8 bytes/);
  });
});
