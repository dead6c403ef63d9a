import { describe, expect, test } from 'vitest';
import { decodeFrame, encodeFrame, type Frame } from '../../../src/room/protocol.ts';
import { ProtocolError, OutOfOrderError } from '../../../src/room/errors.ts';
import { chunkFrame, FrameChannel, MAX_CHUNK_PAYLOAD, MAX_WIRE_MESSAGE, Reassembler } from '../../../src/room/wire.ts';
import { fuzzMessages, sampleFrames } from '../../../src/room/fuzz.ts';
import { memoryLinkPair } from '../../../src/room/memory-link.ts';

const caps = {
  adapter: 'SwiftShader (fallback)', engine: 'webgpu' as const, isFallbackAdapter: true, shaderF16: false,
  maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30, deviceMemoryGiB: 8, memoryBudgetBytes: 2 ** 31, speed: 1.25,
};
const every: Frame[] = [
  { kind: 'hello', protocol: 1, roomId: '0123456789abcdef0123456789abcdef', deviceId: 'abc123xyz', name: 'Phone', caps },
  { kind: 'assign', epoch: 3, model: 'http://127.0.0.1:1/models/tiny', modelKey: 'tiny@1', range: [2, 4], ctx: 512, prev: '', next: '' },
  { kind: 'assign', epoch: 4, model: '', modelKey: 'local', range: [0, 2], ctx: 512, modelFile: 'Qwen3-30B-A3B-Q4_K_M-00001-of-00002.gguf', prev: 'abc123xyz', next: 'def456uvw' },
  { kind: 'assign', epoch: 5, model: '', modelKey: 'local', range: [0, 2], ctx: 32768, prev: '', next: '', kv: 'q8_0', step: 512 },
  { kind: 'read', id: 9, op: 'size', path: 'm.gguf', start: 0, end: 0 },
  ...sampleFrames(4),
  { kind: 'checkpoint', epoch: 2, seq: 9, op: 'truncate', position: 17 },
  { kind: 'data', id: 7, ok: false, message: 'config.json: not found', bytes: new Uint8Array(0) },
  { kind: 'read', id: 8, op: 'exists', path: 'sub/model.safetensors.index.json', start: 0, end: 0 },
  { kind: 'heartbeat', reply: true, sentAt: 123456.789 },
];

describe('frames', () => {
  test('every kind survives encode → decode unchanged', () => {
    for (const f of every) expect(decodeFrame(encodeFrame(f))).toEqual(f);
    expect(new Set(every.map((f) => f.kind)).size).toBe(15);
  });

  test('a hello names each engine by its table kind (a new row needs no code) and refuses a name that is no kind', () => {
    for (const engine of ['reference', 'webgpu', 'wasm', 'reference-2'] as const) {
      const f: Frame = { kind: 'hello', protocol: 1, roomId: '0123456789abcdef0123456789abcdef', deviceId: 'abc123xyz', name: 'Laptop', caps: { ...caps, engine } };
      expect(decodeFrame(encodeFrame(f))).toEqual(f);
    }
    const hello = every[0] as Extract<Frame, { kind: 'hello' }>;
    for (const engine of ['', 'WebGPU', 'a b', 'x'.repeat(33)]) {
      expect(() => decodeFrame(encodeFrame({ ...hello, caps: { ...caps, engine } }))).toThrow(/caps.engine/);
    }
  });

  test('a device\'s prefill step travels in its hello and its assign, and a step past 512 tokens is refused by name', () => {
    const hello = every[0] as Extract<Frame, { kind: 'hello' }>;
    for (const step of [1, 16, 64, 512]) {
      const f: Frame = { ...hello, caps: { ...caps, step } };
      expect(decodeFrame(encodeFrame(f))).toEqual(f);
      const a: Frame = { ...(every[1] as Extract<Frame, { kind: 'assign' }>), step };
      expect(decodeFrame(encodeFrame(a))).toEqual(a);
    }
    // A hostile guest claiming a huge step (it would make the deal count, and an engine allocate, [T, H] rows without bound).
    for (const step of [513, 4096, 65535]) {
      expect(() => decodeFrame(encodeFrame({ ...hello, caps: { ...caps, step } }))).toThrowError(ProtocolError);
      expect(() => decodeFrame(encodeFrame({ ...hello, caps: { ...caps, step } }))).toThrowError(`"hello" frame: caps.step ${step} is more tokens a step than any device takes (at most 512)`);
      expect(() => decodeFrame(encodeFrame({ ...(every[1] as Extract<Frame, { kind: 'assign' }>), step }))).toThrowError(`"assign" frame: step ${step} is more tokens`);
    }
  });

  test('hidden states keep their exact f32 bits (NaN payloads, -0, subnormals)', () => {
    const hidden = new Float32Array([-0, 1e-45, 3.4e38, -1.5, Number.NaN]);
    const back = decodeFrame(encodeFrame({ kind: 'result', epoch: 1, seq: 1, kvLength: 5, hidden })) as Extract<Frame, { kind: 'result' }>;
    expect(new Uint32Array(back.hidden.buffer)).toEqual(new Uint32Array(hidden.buffer));
  });

  test.each([
    ['empty', new Uint8Array(0), /empty frame/],
    ['unknown kind', new Uint8Array([99]), /unknown frame kind 99/],
    ['truncated', encodeFrame(every[1]!).subarray(0, 6), /"assign" frame: frame ends inside field/],
    ['trailing bytes', new Uint8Array([...encodeFrame({ kind: 'bye', reason: 'x' }), 0]), /"bye" frame: 1 unexpected trailing bytes/],
  ])('rejects %s with a named ProtocolError', (_name, bytes, message) => {
    expect(() => decodeFrame(bytes)).toThrowError(ProtocolError);
    expect(() => decodeFrame(bytes)).toThrowError(message);
  });

  test('field validation names the field', () => {
    const bad = (f: Frame) => () => decodeFrame(encodeFrame(f));
    expect(bad({ ...every[1], range: [4, 2] } as Frame)).toThrowError(/"assign" frame: layer range \[4, 2\) is not a range/);
    expect(bad({ ...every[0], roomId: 'short' } as Frame)).toThrowError(/roomId is not 32 hex digits/);
    expect(bad({ kind: 'forward', epoch: 1, seq: 1, range: [0, 1], position: 0, count: 3, hidden: new Float32Array(4) }))
      .toThrowError(/hidden has 4 values, not a multiple of count 3/);
    expect(bad({ kind: 'read', id: 1, op: 'range', path: '../etc/passwd', start: 0, end: 1 })).toThrowError(/leaves the model folder/);
    expect(bad({ ...every[1], next: 'Not An Id' } as Frame)).toThrowError(/"assign" frame: next "Not An Id" is neither '' \(the host\) nor a device id/);
    expect(bad({ ...every[1], prev: 'abc123xyz', next: 'abc123xyz' } as Frame)).toThrowError(/prev and next are the same device "abc123xyz"/);
    const kv2 = encodeFrame(every[1]!);
    kv2[kv2.length - 3] = 2;   // assign's byte before its u16 step: the KV cache type
    expect(() => decodeFrame(kv2)).toThrowError(/"assign" frame: kv 2 is neither f16 \(0\) nor q8_0 \(1\)/);
    const work: Frame = { kind: 'result', epoch: 1, seq: 1, kvLength: 1, hidden: new Float32Array(4), work: [1.5, 0] };
    expect(decodeFrame(encodeFrame(work))).toEqual(work);
    expect(bad({ ...work, work: [-1] })).toThrowError(/"result" frame: work -1 ms is out of range/);
    expect(bad({ ...work, work: new Array(65).fill(1) })).toThrowError(/work lists 65 devices, more than a chain has \(64\)/);
    expect(bad({ kind: 'link-lost', epoch: 1, peer: '', reason: 'x' })).toThrowError(/"link-lost" frame: peer "" is not a device id/);
    expect(bad({ kind: 'progress', epoch: 1, bytesDone: 1.5, bytesTotal: 2, tensorsDone: 0, tensorsTotal: 1, networkBytes: 0, cacheBytes: 0 }))
      .toThrowError(/whole numbers/);
    const nan = encodeFrame({ kind: 'heartbeat', reply: false, sentAt: 1 });
    new DataView(nan.buffer).setFloat64(2, Number.NaN, true);
    expect(() => decodeFrame(nan)).toThrowError(/"sentAt" is not a finite number/);
    for (const [code, op] of [[0, 'pin'], [1, 'restore'], [2, 'truncate'], [3, 'release']] as const) {
      const frame = encodeFrame({ kind: 'checkpoint', epoch: 1, seq: 1, op, position: 5 });
      expect(frame[9]).toBe(code);        // kind u8, epoch u32, seq u32, then the op
      expect(decodeFrame(frame)).toEqual({ kind: 'checkpoint', epoch: 1, seq: 1, op, position: 5 });
    }
    for (const unknown of [4, 9, 255]) {
      const frame = encodeFrame({ kind: 'checkpoint', epoch: 1, seq: 1, op: 'truncate', position: 0 });
      frame[9] = unknown;
      expect(() => decodeFrame(frame)).toThrowError(new RegExp(`"checkpoint" frame: checkpoint op ${unknown} is none of pin \\(0\\), restore \\(1\\), truncate \\(2\\), release \\(3\\)`));
    }
  });
});

describe('wire chunking', () => {
  test('a 3 MiB hidden state crosses in ≤256 KiB messages and comes back bit-exact', () => {
    const hidden = new Float32Array(786_432).map((_, i) => Math.sin(i));
    const bytes = encodeFrame({ kind: 'forward', epoch: 1, seq: 1, range: [0, 1], position: 0, count: 384, hidden });
    const msgs = chunkFrame(bytes, 5);
    expect(msgs.length).toBe(Math.ceil(bytes.length / MAX_CHUNK_PAYLOAD));
    expect(Math.max(...msgs.map((m) => m.length))).toBeLessThanOrEqual(MAX_WIRE_MESSAGE);
    const r = new Reassembler();
    const results = msgs.map((m) => r.push(m));
    expect(results.slice(0, -1).every((x) => x === null)).toBe(true);
    const f = decodeFrame(results.at(-1)!) as Extract<Frame, { kind: 'forward' }>;
    expect(Buffer.compare(Buffer.from(f.hidden.buffer), Buffer.from(hidden.buffer))).toBe(0);
  });

  test('a chunk that does not continue its frame is an OutOfOrderError; the stream then resynchronises', () => {
    const big = chunkFrame(new Uint8Array(MAX_CHUNK_PAYLOAD * 2 + 5), 1);
    const r = new Reassembler();
    expect(r.push(big[0]!)).toBeNull();
    expect(() => r.push(big[2]!)).toThrowError(OutOfOrderError);
    const small = chunkFrame(encodeFrame({ kind: 'bye', reason: 'ok' }), 2)[0]!;
    expect(decodeFrame(r.push(small)!)).toEqual({ kind: 'bye', reason: 'ok' });
    // a new frame while one is half-received: the half one is reported as dropped, the new one kept
    expect(r.push(big[0]!)).toBeNull();
    expect(decodeFrame(r.push(small)!)).toEqual({ kind: 'bye', reason: 'ok' });
    expect(r.takeDropped()).toBeInstanceOf(OutOfOrderError);
  });

  test('wrong magic, version and lying sizes are ProtocolErrors', () => {
    const msg = chunkFrame(encodeFrame({ kind: 'bye', reason: 'x' }), 0)[0]!;
    const r = new Reassembler();
    const bad = (mutate: (m: Uint8Array) => void) => { const m = msg.slice(); mutate(m); return () => r.push(m); };
    expect(bad((m) => { m[0] = 0; })).toThrowError(/"PL" magic/);
    expect(bad((m) => { m[2] = 9; })).toThrowError(/protocol version 9 is not supported/);
    expect(bad((m) => new DataView(m.buffer).setUint32(12, 2 ** 31, true))).toThrowError(/exceeds the/);
    expect(bad((m) => new DataView(m.buffer).setUint32(12, 3, true))).toThrowError(/chunks carry 4 bytes, header says 3/);
    expect(() => r.push(new Uint8Array(5))).toThrowError(/shorter than its header/);
  });
});

describe('fuzz', () => {
  test('2,000 random and mutated messages: the decoder only ever throws ProtocolErrors', () => {
    const r = new Reassembler();
    let frames = 0, errors = 0;
    for (const msg of fuzzMessages(42, 2000)) {
      try {
        const bytes = r.push(msg);
        r.takeDropped();
        if (bytes) { decodeFrame(bytes); frames++; }
      } catch (e) {
        expect(e).toBeInstanceOf(ProtocolError);
        expect((e as Error).message.length).toBeGreaterThan(10);
        errors++;
      }
    }
    expect(errors).toBeGreaterThan(1000); // most are rejected …
    expect(frames).toBeGreaterThan(20);   // … and some mutations are still valid frames
  });

  test('a FrameChannel fed fuzz reports bad frames and still delivers the next good one', async () => {
    const [a, b] = memoryLinkPair();
    const sender = new FrameChannel(a);
    const receiver = new FrameChannel(b);
    const got: Frame[] = [];
    const bad: Error[] = [];
    receiver.onFrame = (f) => got.push(f);
    receiver.onBadFrame = (e) => bad.push(e);
    for (const m of fuzzMessages(7, 1000)) receiver.receive(m);
    expect(bad.length).toBeGreaterThan(500);
    expect(bad.every((e) => e instanceof ProtocolError)).toBe(true);
    got.length = 0;
    await sender.send({ kind: 'bye', reason: 'still alive' });
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([{ kind: 'bye', reason: 'still alive' }]);
  });
});
