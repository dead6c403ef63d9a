// Frames over a message link: every frame is cut into wire messages of at most 256 KiB (the SCTP
// message limit of RTCDataChannel), each with a 16-byte header:
//   [0..2)  magic "PL"     [2] protocol version     [3] flags (bit 0 = last chunk of its frame)
//   [4..8)  frame number (u32, per direction)     [8..12) chunk index (u32)     [12..16) frame bytes (u32)
// Sending respects backpressure (waits for the link's buffered amount to drain below a threshold), and
// a Reassembler rebuilds frames, rejecting any message that does not continue the frame in progress.
import { ProtocolError, OutOfOrderError } from './errors.ts';
import { decodeFrame, encodeFrame, PROTOCOL_VERSION, type Frame } from './protocol.ts';

export const MAX_WIRE_MESSAGE = 256 * 1024;
export const WIRE_HEADER = 16;
export const MAX_CHUNK_PAYLOAD = MAX_WIRE_MESSAGE - WIRE_HEADER;
/** Largest frame accepted (hidden states of a long prefill chunk, an 8 MiB weight read, …). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Sending pauses while more than this is buffered on the link (RTCDataChannel throws past 16 MiB). */
export const HIGH_WATER = 4 * 1024 * 1024;

/** A message transport: an RTCDataChannel (peerjs-link.ts) or an in-memory pair (tests, bench). */
export interface MessageLink {
  send(message: Uint8Array): void;
  bufferedAmount(): number;
  /** Resolves once bufferedAmount() is at or below the link's low threshold (or the link closed). */
  drained(): Promise<void>;
  isOpen(): boolean;
  close(): void;
  onMessage: ((message: Uint8Array) => void) | null;
  onClose: ((why: string) => void) | null;
}

/** Frame → wire messages. */
export function chunkFrame(frame: Uint8Array, frameNo: number): Uint8Array[] {
  if (frame.length > MAX_FRAME_BYTES) throw new ProtocolError(`frame of ${frame.length} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`);
  const out: Uint8Array[] = [];
  const chunks = Math.max(1, Math.ceil(frame.length / MAX_CHUNK_PAYLOAD));
  for (let i = 0; i < chunks; i++) {
    const payload = frame.subarray(i * MAX_CHUNK_PAYLOAD, Math.min(frame.length, (i + 1) * MAX_CHUNK_PAYLOAD));
    const msg = new Uint8Array(WIRE_HEADER + payload.length);
    const v = new DataView(msg.buffer);
    msg[0] = 0x50; msg[1] = 0x4c; msg[2] = PROTOCOL_VERSION; msg[3] = i === chunks - 1 ? 1 : 0;
    v.setUint32(4, frameNo >>> 0, true);
    v.setUint32(8, i, true);
    v.setUint32(12, frame.length, true);
    msg.set(payload, WIRE_HEADER);
    out.push(msg);
  }
  return out;
}

/**
 * Wire messages → frame bytes. push() returns a whole frame, null while one is incomplete, or throws.
 * A frame cut off by the start of the next one is reported in `dropped` (take it with takeDropped()).
 */
export class Reassembler {
  private dropped: Error | null = null;
  private parts: Uint8Array[] = [];
  private got = 0;
  private frameNo = -1;
  private total = 0;

  push(msg: Uint8Array): Uint8Array | null {
    if (msg.length < WIRE_HEADER) return this.fail(new ProtocolError(`wire message of ${msg.length} bytes is shorter than its header`));
    if (msg.length > MAX_WIRE_MESSAGE) return this.fail(new ProtocolError(`wire message of ${msg.length} bytes exceeds 256 KiB`));
    if (msg[0] !== 0x50 || msg[1] !== 0x4c) return this.fail(new ProtocolError('wire message does not start with the "PL" magic'));
    if (msg[2] !== PROTOCOL_VERSION) {
      return this.fail(new ProtocolError(`protocol version ${msg[2]} is not supported (this device speaks ${PROTOCOL_VERSION}): reload both pages`));
    }
    const flags = msg[3]!;
    if (flags > 1) return this.fail(new ProtocolError(`wire flags ${flags} have unknown bits`));
    const v = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
    const frameNo = v.getUint32(4, true), index = v.getUint32(8, true), total = v.getUint32(12, true);
    const payload = msg.subarray(WIRE_HEADER);
    if (total > MAX_FRAME_BYTES) return this.fail(new ProtocolError(`frame of ${total} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`));
    if (index === 0) {
      if (this.parts.length > 0) {
        // The previous frame was cut off: drop it (reported via `dropped`) and keep this one, which
        // resynchronises the stream.
        this.dropped = new OutOfOrderError(`frame ${frameNo} started before frame ${this.frameNo} was complete`);
      }
      this.start(frameNo, total);
    } else if (this.parts.length === 0 || frameNo !== this.frameNo || index !== this.parts.length || total !== this.total) {
      return this.fail(new OutOfOrderError(`chunk ${index} of frame ${frameNo} does not continue frame ${this.frameNo} (next chunk ${this.parts.length})`));
    }
    return this.absorb(payload, flags);
  }

  takeDropped(): Error | null { const d = this.dropped; this.dropped = null; return d; }

  private start(frameNo: number, total: number): void {
    this.parts = []; this.got = 0; this.frameNo = frameNo; this.total = total;
  }
  private absorb(payload: Uint8Array, flags: number): Uint8Array | null {
    this.parts.push(payload.slice());
    this.got += payload.length;
    const last = (flags & 1) === 1;
    if (this.got > this.total || (last && this.got !== this.total) || (!last && payload.length !== MAX_CHUNK_PAYLOAD)) {
      return this.fail(new ProtocolError(`frame ${this.frameNo}: chunks carry ${this.got} bytes, header says ${this.total}`));
    }
    if (!last) return null;
    const out = new Uint8Array(this.total);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    this.parts = []; this.got = 0;
    return out;
  }
  private fail(e: Error): never {
    this.parts = []; this.got = 0;
    throw e;
  }
}

/**
 * A typed, validated frame stream over a MessageLink. Frames are sent in order (one send at a time, so
 * chunks of two frames never interleave). A message that fails to reassemble or decode goes to onBadFrame
 * (the peer gets an `error` frame from the owner); it never throws out of the link's callback.
 */
export class FrameChannel {
  onFrame: ((f: Frame) => void) | null = null;
  onBadFrame: ((e: Error) => void) | null = null;
  onClose: ((why: string) => void) | null = null;
  /** Bytes sent / received on the wire (headers included), for accounting. */
  sentBytes = 0;
  receivedBytes = 0;
  private nextFrameNo = 0;
  private pending = 0;                   // frames queued or being sent
  private queue: Promise<void> = Promise.resolve();
  private readonly reassembler = new Reassembler();
  private closed = false;

  constructor(readonly link: MessageLink) {
    link.onMessage = (m) => this.receive(m);
    link.onClose = (why) => { if (!this.closed) { this.closed = true; this.onClose?.(why); } };
  }

  isOpen(): boolean { return !this.closed && this.link.isOpen(); }

  /** Feed one wire message as if it came from the link (the e2e fuzzer uses this on a guest). */
  receive(message: Uint8Array): void {
    this.receivedBytes += message.length;
    let frame: Frame;
    try {
      const bytes = this.reassembler.push(message);
      const dropped = this.reassembler.takeDropped();
      if (dropped) this.onBadFrame?.(dropped);
      if (!bytes) return;
      frame = decodeFrame(bytes);
    } catch (e) {
      this.onBadFrame?.(e as Error);
      return;
    }
    try { this.onFrame?.(frame); } catch (e) { this.onBadFrame?.(e as Error); }
  }

  /** Queue a frame; resolves when all of its chunks were handed to the link. Rejects if the link closed. */
  send(frame: Frame): Promise<void> {
    const bytes = encodeFrame(frame);
    const frameNo = this.nextFrameNo++;
    this.pending++;
    const job = this.queue.then(async () => {
      for (const msg of chunkFrame(bytes, frameNo)) {
        if (!this.isOpen()) throw new ProtocolError(`cannot send "${frame.kind}": the connection is closed`);
        if (this.link.bufferedAmount() > HIGH_WATER) await this.link.drained();
        if (!this.isOpen()) throw new ProtocolError(`cannot send "${frame.kind}": the connection is closed`);
        this.link.send(msg);
        this.sentBytes += msg.length;
      }
    });
    this.queue = job.catch(() => undefined).finally(() => { this.pending--; });
    return job;
  }

  /**
   * Send synchronously when nothing is queued (a goodbye on `pagehide`, where queued promise jobs may
   * never run); otherwise queue it. Never throws.
   */
  sendNow(frame: Frame): void {
    if (this.pending === 0 && this.isOpen()) {
      try {
        for (const msg of chunkFrame(encodeFrame(frame), this.nextFrameNo++)) { this.link.send(msg); this.sentBytes += msg.length; }
      } catch { /* the link is going away anyway */ }
      return;
    }
    this.trySend(frame);
  }

  /** Best effort, for goodbyes and error replies: never rejects. */
  trySend(frame: Frame): void { this.send(frame).catch(() => undefined); }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.link.close();
  }
}
