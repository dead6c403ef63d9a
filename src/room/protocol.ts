// The room's one binary protocol, version 2: a discriminated union of frames, encoded little-endian.
// A frame is `u8 kind` + the kind's fields in the order below; wire.ts cuts frames into ≤256 KiB
// messages. decodeFrame validates every field (ranges, finiteness, sizes, trailing bytes) and throws a
// ProtocolError naming the frame kind and field; it never trusts a length before checking it.
// Version 5: hello carries the device's prefill step (caps.step) and `assign` the step the deal gave it.
// Version 4: hello names the engine by its table kind (a string: a new engine needs no protocol code).
// Version 3: hello carries the engine's card name (caps.engineLabel). Version 2 (direct hops): `assign` names the device's pipeline neighbours, `forward` also travels guest →
// guest along a chain, and `link-lost` reports a broken direct channel.
import { ENGINE_KIND, type EngineKind } from '../engines/contract.ts';
import type { LayerRange } from '../model/engine-types.ts';
import { ByteReader, ByteWriter } from './bytes.ts';
import { MAX_ENGINE_STEP, type KvType } from './device-bytes.ts';
import { ProtocolError } from './errors.ts';

export const PROTOCOL_VERSION = 5;
/** Layer indices travel as u16: no model has more. */
const MAX_LAYER = 0xffff;
const MAX_POSITION = 1 << 24;
/** Most guests in one chain (a `work` list is one entry per guest). */
export const MAX_CHAIN = 64;
/**
 * The `error` code (seq 0) of a guest whose load of its deal failed: the host marks the device failed at
 * once, naming the cause, instead of waiting out the load deadline. Other seq-0 errors are frame refusals.
 */
export const LOAD_FAILED_CODE = 'load-failed';
/** A device id as the host and the signaling ids use it (newDeviceId: 20 base-36 digits). */
export const DEVICE_ID = /^[0-9a-z]{6,64}$/;
/**
 * Sane maxima for numbers a peer reports: anything past them is a lie or a bug, and is refused here so
 * no such number reaches the deal, the device cards or the arithmetic (a speed of 1e308 once made NaN ranges).
 */
export const PEER_LIMITS = {
  bytes: 2 ** 50,                 // any byte size or count: 1 PiB
  deviceMemoryGiB: 2 ** 20,
  speed: 1e6,                     // GFLOP/s of a JS matvec (real devices: 0.1–20)
  ms: 1e9,                        // ~11 days
} as const;

/** What a device reports on joining (see capabilities.ts for how it is measured). */
export interface DeviceCaps {
  adapter: string;                 // "SwiftShader (fallback) · 1 GiB bindings · no f16", or "no WebGPU"
  engine: EngineKind;              // which engine runs its layers: a row of its page's table (src/engines), "webgpu", "wasm"…
  isFallbackAdapter: boolean;
  shaderF16: boolean;
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  deviceMemoryGiB: number;         // navigator.deviceMemory (0 = unknown)
  memoryBudgetBytes: number;       // what the device offers for weights + KV (user-adjustable)
  speed: number;                   // quick measured speed, GFLOP/s of an f32 matvec (relative use only)
  /** What the device card names the engine: "WebGPU · <adapter>", "CPU · 2 threads · SIMD", "reference (JS on the CPU)". */
  engineLabel?: string;
  /** Tokens a prefill step its engine takes (EngineRow.prefillStep), 1..MAX_ENGINE_STEP; absent: the engine's own (the deal counts its default). */
  step?: number;
}

/**
 * What a checkpoint frame does to a guest's cache. Dense models need only truncate (restoring a
 * checkpoint is cutting the KV back to it). Hybrid models' recurrent layers (Gated DeltaNet) keep
 * snapshots of their state: pin takes one at `position` (the guest's cache length), restore goes back
 * to `position` (KV cut, state restored from its snapshot), release forgets one.
 */
export type CheckpointOp = 'pin' | 'restore' | 'truncate' | 'release';
const CHECKPOINT_CODES: Record<CheckpointOp, number> = { pin: 0, restore: 1, truncate: 2, release: 3 };
const CHECKPOINT_BY_CODE = new Map(Object.entries(CHECKPOINT_CODES).map(([op, c]) => [c, op as CheckpointOp]));
export type ReadOp = 'range' | 'file' | 'exists' | 'size';
const READ_OPS: ReadOp[] = ['range', 'file', 'exists', 'size'];

export type Frame =
  /** guest → host, first frame on a connection. */
  | { kind: 'hello'; protocol: number; roomId: string; deviceId: string; name: string; caps: DeviceCaps }
  /**
   * host → guest: load these layers of this model (model '' = read it from the host over the channel).
   * prev/next: the pipeline neighbours of this deal ('' = the host): `forward` frames come from prev, and
   * the output goes to next as a `forward` (a direct hop) or, when next is the host, as a `result`.
   * step: the most tokens a step its engine may take (its scratch was dealt at it; absent: its own).
   */
  | { kind: 'assign'; epoch: number; model: string; modelKey: string; range: LayerRange; ctx: number; modelFile?: string; prev: string; next: string; kv?: KvType; step?: number }
  /** guest → host while loading. networkBytes/cacheBytes: where the bytes came from. */
  | { kind: 'progress'; epoch: number; bytesDone: number; bytesTotal: number; tensorsDone: number; tensorsTotal: number; networkBytes: number; cacheBytes: number }
  /** guest → host: layers loaded, engine ready, KV empty. */
  | { kind: 'ready'; epoch: number; networkBytes: number; cacheBytes: number; ms: number }
  /**
   * host → the first guest of a chain, or a guest → the next one (a direct hop): run the part of `range`
   * that is yours on hidden [count, H] for positions [position, position+count), then pass it on.
   */
  | { kind: 'forward'; epoch: number; seq: number; range: LayerRange; position: number; count: number; hidden: Float32Array; work?: number[] }
  /**
   * last guest of a chain → host: hidden [count, H] after the layers; kvLength after writing them. work:
   * the ms each guest of the chain spent on its layers for this request, in chain order (each appends its
   * own to the forward's before passing it on), so the host can tell the devices' speeds apart.
   */
  | { kind: 'result'; epoch: number; seq: number; kvLength: number; hidden: Float32Array; work?: number[] }
  /** host → guest: checkpoint op on the guest's cache at `position` (see CheckpointOp). */
  | { kind: 'checkpoint'; epoch: number; seq: number; op: CheckpointOp; position: number }
  /** guest → host: a checkpoint op is done. */
  | { kind: 'ack'; epoch: number; seq: number; kvLength: number }
  /** either way; the receiver of a non-reply answers with reply=true and the same sentAt. */
  | { kind: 'heartbeat'; reply: boolean; sentAt: number }
  /** either way: leaving (pagehide, removed by the host, room closed). */
  | { kind: 'bye'; reason: string }
  /** either way: seq of the request it answers, 0 = none (e.g. a malformed frame). */
  | { kind: 'error'; seq: number; code: string; message: string }
  /** guest → host: read model bytes from the host's source (when the host has a local folder). */
  | { kind: 'read'; id: number; op: ReadOp; path: string; start: number; end: number }
  /** host → guest: answer to a read (ok=false: message says why). */
  | { kind: 'data'; id: number; ok: boolean; message: string; bytes: Uint8Array }
  /** guest → host: the direct channel to neighbour `peer` could not be opened, or closed. */
  | { kind: 'link-lost'; epoch: number; peer: string; reason: string }
  /** guest → next guest: request `seq` failed upstream (the host was told): skip it, pass this on. */
  | { kind: 'skip'; epoch: number; seq: number };

export type FrameKind = Frame['kind'];
export type FrameOf<K extends FrameKind> = Extract<Frame, { kind: K }>;

const KIND_CODES: Record<FrameKind, number> = {
  hello: 1, assign: 2, progress: 3, ready: 4, forward: 5, result: 6, checkpoint: 7,
  ack: 8, heartbeat: 9, bye: 10, error: 11, read: 12, data: 13, 'link-lost': 14, skip: 15,
};
const KIND_BY_CODE = new Map(Object.entries(KIND_CODES).map(([k, c]) => [c, k as FrameKind]));

export function encodeFrame(f: Frame): Uint8Array {
  const w = new ByteWriter().u8(KIND_CODES[f.kind]);
  switch (f.kind) {
    case 'hello':
      w.u16(f.protocol).str(f.roomId).str(f.deviceId).str(f.name);
      w.str(f.caps.adapter).str(f.caps.engine)
        .u8((f.caps.isFallbackAdapter ? 1 : 0) | (f.caps.shaderF16 ? 2 : 0))
        .f64(f.caps.maxStorageBufferBindingSize).f64(f.caps.maxBufferSize).f64(f.caps.deviceMemoryGiB)
        .f64(f.caps.memoryBudgetBytes).f64(f.caps.speed).str(f.caps.engineLabel ?? '').u16(f.caps.step ?? 0);
      break;
    case 'assign':
      w.u32(f.epoch).str(f.model).str(f.modelKey).u16(f.range[0]).u16(f.range[1]).u32(f.ctx).str(f.modelFile ?? '').str(f.prev).str(f.next).u8(f.kv === 'q8_0' ? 1 : 0).u16(f.step ?? 0);
      break;
    case 'progress':
      w.u32(f.epoch).f64(f.bytesDone).f64(f.bytesTotal).u32(f.tensorsDone).u32(f.tensorsTotal).f64(f.networkBytes).f64(f.cacheBytes);
      break;
    case 'ready': w.u32(f.epoch).f64(f.networkBytes).f64(f.cacheBytes).f64(f.ms); break;
    case 'forward':
      w.u32(f.epoch).u32(f.seq).u16(f.range[0]).u16(f.range[1]).u32(f.position).u32(f.count).f32s(f.hidden);
      writeWork(w, f.work);
      break;
    case 'result': w.u32(f.epoch).u32(f.seq).u32(f.kvLength).f32s(f.hidden); writeWork(w, f.work); break;
    case 'checkpoint': w.u32(f.epoch).u32(f.seq).u8(CHECKPOINT_CODES[f.op]).u32(f.position); break;
    case 'ack': w.u32(f.epoch).u32(f.seq).u32(f.kvLength); break;
    case 'heartbeat': w.u8(f.reply ? 1 : 0).f64(f.sentAt); break;
    case 'bye': w.str(f.reason); break;
    case 'error': w.u32(f.seq).str(f.code).str(f.message); break;
    case 'read': w.u32(f.id).u8(READ_OPS.indexOf(f.op)).str(f.path).f64(f.start).f64(f.end); break;
    case 'data': w.u32(f.id).u8(f.ok ? 1 : 0).str(f.message).bytes(f.bytes); break;
    case 'link-lost': w.u32(f.epoch).str(f.peer).str(f.reason); break;
    case 'skip': w.u32(f.epoch).u32(f.seq); break;
  }
  return w.finish();
}

function writeWork(w: ByteWriter, work: readonly number[] | undefined): void {
  w.u8(work?.length ?? 0);
  for (const ms of work ?? []) w.f64(ms);
}

function readWork(r: ByteReader, kind: string): { work?: number[] } {
  const n = r.u8('work.length');
  check(n <= MAX_CHAIN, kind, `work lists ${n} devices, more than a chain has (${MAX_CHAIN})`);
  const work: number[] = [];
  for (let i = 0; i < n; i++) {
    const ms = r.f64('work');
    check(ms >= 0 && ms <= PEER_LIMITS.ms, kind, `work ${ms} ms is out of range [0, ${PEER_LIMITS.ms}]`);
    work.push(ms);
  }
  return n > 0 ? { work } : {};
}

function check(cond: boolean, kind: string, msg: string): void {
  if (!cond) throw new ProtocolError(`"${kind}" frame: ${msg}`);
}
const isCount = (v: number) => Number.isInteger(v) && v >= 0 && v <= PEER_LIMITS.bytes;
const CAP_LIMITS: Record<'maxStorageBufferBindingSize' | 'maxBufferSize' | 'deviceMemoryGiB' | 'memoryBudgetBytes' | 'speed', number> = {
  maxStorageBufferBindingSize: PEER_LIMITS.bytes, maxBufferSize: PEER_LIMITS.bytes, memoryBudgetBytes: PEER_LIMITS.bytes,
  deviceMemoryGiB: PEER_LIMITS.deviceMemoryGiB, speed: PEER_LIMITS.speed,
};

/**
 * A prefill step (u16, 0 = none given): at most MAX_ENGINE_STEP tokens, so no peer can make another size
 * its activations, read-backs or forwards past what the deal counts (README, "The prefill step").
 */
function readStep(r: ByteReader, kind: string, field: string): number | undefined {
  const step = r.u16(field);
  check(step <= MAX_ENGINE_STEP, kind, `${field} ${step} is more tokens a step than any device takes (at most ${MAX_ENGINE_STEP})`);
  return step === 0 ? undefined : step;
}

function readRange(r: ByteReader, kind: string): LayerRange {
  const range: LayerRange = [r.u16('range.start'), r.u16('range.end')];
  check(range[0] <= range[1] && range[1] <= MAX_LAYER, kind, `layer range [${range[0]}, ${range[1]}) is not a range`);
  return range;
}

/** Bytes (one reassembled frame) → Frame, or a ProtocolError naming what is wrong. */
export function decodeFrame(bytes: Uint8Array): Frame {
  if (bytes.length === 0) throw new ProtocolError('empty frame');
  const code = bytes[0]!;
  const kind = KIND_BY_CODE.get(code);
  if (!kind) throw new ProtocolError(`unknown frame kind ${code}`);
  const r = new ByteReader(bytes.subarray(1), `"${kind}" frame`);
  const frame = decodeBody(kind, r);
  r.end();
  return frame;
}

function decodeBody(kind: FrameKind, r: ByteReader): Frame {
  switch (kind) {
    case 'hello': {
      const protocol = r.u16('protocol');
      const roomId = r.str('roomId', 128);
      const deviceId = r.str('deviceId', 128);
      const name = r.str('name', 256);
      const adapter = r.str('caps.adapter', 1024);
      const engine = r.str('caps.engine', 32);   // the host checks it against its engine table
      check(ENGINE_KIND.test(engine), kind, `caps.engine "${engine}" is not an engine name (a-z, 0-9, -)`);
      const flags = r.u8('caps.flags');
      check(flags <= 3, kind, `caps.flags ${flags} has unknown bits`);
      const caps: DeviceCaps = {
        adapter, engine,
        isFallbackAdapter: (flags & 1) !== 0, shaderF16: (flags & 2) !== 0,
        maxStorageBufferBindingSize: r.f64('caps.maxStorageBufferBindingSize'), maxBufferSize: r.f64('caps.maxBufferSize'),
        deviceMemoryGiB: r.f64('caps.deviceMemoryGiB'), memoryBudgetBytes: r.f64('caps.memoryBudgetBytes'), speed: r.f64('caps.speed'),
      };
      const engineLabel = r.str('caps.engineLabel', 256);
      if (engineLabel) caps.engineLabel = engineLabel;
      const step = readStep(r, kind, 'caps.step');
      if (step !== undefined) caps.step = step;
      for (const [k, max] of Object.entries(CAP_LIMITS) as [keyof typeof CAP_LIMITS, number][]) {
        check(caps[k] >= 0 && caps[k] <= max, kind, `caps.${k} ${caps[k]} is out of range [0, ${max}]`);
      }
      check(/^[0-9a-f]{32}$/.test(roomId), kind, 'roomId is not 32 hex digits');
      check(DEVICE_ID.test(deviceId), kind, 'deviceId is not 6–64 lowercase letters/digits');
      return { kind, protocol, roomId, deviceId, name, caps };
    }
    case 'assign': {
      const epoch = r.u32('epoch');
      const model = r.str('model', 2048);
      const modelKey = r.str('modelKey', 2048);
      const range = readRange(r, kind);
      const ctx = r.u32('ctx');
      check(ctx > 0 && ctx <= MAX_POSITION, kind, `ctx ${ctx} is out of range`);
      const modelFile = r.str('modelFile', 2048);
      const prev = r.str('prev', 64), next = r.str('next', 64);
      for (const [field, id] of [['prev', prev], ['next', next]] as const) {
        check(id === '' || DEVICE_ID.test(id), kind, `${field} "${id}" is neither '' (the host) nor a device id`);
      }
      check(prev === '' || prev !== next, kind, `prev and next are the same device "${prev}"`);
      const kvCode = r.u8('kv');
      check(kvCode <= 1, kind, `kv ${kvCode} is neither f16 (0) nor q8_0 (1)`);
      const step = readStep(r, kind, 'step');
      return { kind, epoch, model, modelKey, range, ctx, ...(modelFile ? { modelFile } : {}), prev, next, ...(kvCode === 1 ? { kv: 'q8_0' as const } : {}), ...(step !== undefined ? { step } : {}) };
    }
    case 'progress': {
      const f = {
        kind, epoch: r.u32('epoch'), bytesDone: r.f64('bytesDone'), bytesTotal: r.f64('bytesTotal'),
        tensorsDone: r.u32('tensorsDone'), tensorsTotal: r.u32('tensorsTotal'), networkBytes: r.f64('networkBytes'), cacheBytes: r.f64('cacheBytes'),
      } as const;
      check([f.bytesDone, f.bytesTotal, f.networkBytes, f.cacheBytes].every(isCount), kind, `byte counts must be whole numbers in [0, ${PEER_LIMITS.bytes}]`);
      check(f.bytesDone <= f.bytesTotal && f.tensorsDone <= f.tensorsTotal, kind, `done (${f.bytesDone} bytes, ${f.tensorsDone} tensors) is more than the total (${f.bytesTotal}, ${f.tensorsTotal})`);
      return f;
    }
    case 'ready': {
      const f = { kind, epoch: r.u32('epoch'), networkBytes: r.f64('networkBytes'), cacheBytes: r.f64('cacheBytes'), ms: r.f64('ms') } as const;
      check(isCount(f.networkBytes) && isCount(f.cacheBytes) && f.ms >= 0 && f.ms <= PEER_LIMITS.ms, kind, `byte counts must be whole numbers in [0, ${PEER_LIMITS.bytes}] and ms in [0, ${PEER_LIMITS.ms}]`);
      return f;
    }
    case 'forward': {
      const epoch = r.u32('epoch'), seq = r.u32('seq');
      const range = readRange(r, kind);
      const position = r.u32('position'), count = r.u32('count');
      check(count > 0 && position + count <= MAX_POSITION, kind, `positions [${position}, ${position + count}) are out of range`);
      const hidden = r.f32s('hidden');
      check(hidden.length > 0 && hidden.length % count === 0, kind, `hidden has ${hidden.length} values, not a multiple of count ${count}`);
      return { kind, epoch, seq, range, position, count, hidden, ...readWork(r, kind) };
    }
    case 'result': {
      const epoch = r.u32('epoch'), seq = r.u32('seq'), kvLength = r.u32('kvLength'), hidden = r.f32s('hidden');
      return { kind, epoch, seq, kvLength, hidden, ...readWork(r, kind) };
    }
    case 'checkpoint': {
      const epoch = r.u32('epoch'), seq = r.u32('seq');
      const code = r.u8('op');
      const op = CHECKPOINT_BY_CODE.get(code);
      check(op !== undefined, kind, `checkpoint op ${code} is none of pin (0), restore (1), truncate (2), release (3)`);
      const position = r.u32('position');
      check(position <= MAX_POSITION, kind, `position ${position} is out of range`);
      return { kind, epoch, seq, op: op!, position };
    }
    case 'ack': return { kind, epoch: r.u32('epoch'), seq: r.u32('seq'), kvLength: r.u32('kvLength') };
    case 'heartbeat': {
      const reply = r.u8('reply');
      check(reply <= 1, kind, `reply flag ${reply} is not 0 or 1`);
      return { kind, reply: reply === 1, sentAt: r.f64('sentAt') };
    }
    case 'bye': return { kind, reason: r.str('reason', 1024) };
    case 'error': return { kind, seq: r.u32('seq'), code: r.str('code', 128), message: r.str('message', 4096) };
    case 'read': {
      const id = r.u32('id');
      const op = READ_OPS[r.u8('op')];
      check(op !== undefined, kind, 'unknown read op');
      const path = r.str('path', 1024);
      const start = r.f64('start'), end = r.f64('end');
      check(isCount(start) && isCount(end) && start <= end, kind, `byte range [${start}, ${end}) is not a range`);
      check(!path.split('/').includes('..') && !path.startsWith('/'), kind, `path "${path}" leaves the model folder`);
      return { kind, id, op: op!, path, start, end };
    }
    case 'data': {
      const id = r.u32('id');
      const ok = r.u8('ok');
      check(ok <= 1, kind, `ok flag ${ok} is not 0 or 1`);
      return { kind, id, ok: ok === 1, message: r.str('message', 4096), bytes: r.bytes('bytes') };
    }
    case 'link-lost': {
      const epoch = r.u32('epoch'), peer = r.str('peer', 64), reason = r.str('reason', 1024);
      check(DEVICE_ID.test(peer), kind, `peer "${peer}" is not a device id`);
      return { kind, epoch, peer, reason };
    }
    case 'skip': return { kind, epoch: r.u32('epoch'), seq: r.u32('seq') };
  }
}
