// Model bytes over the data channel: when the host has the model from a local folder, a guest reads it
// through `read` frames and the host answers with `data` frames from its own ModelSource. Large reads
// are split into ≤ READ_SLICE requests so no frame gets near the frame limit.
import { FileTooLongError } from '../model/errors.ts';
import type { ModelSource } from '../model/types.ts';
import { RoomError } from './errors.ts';
import type { FrameOf } from './protocol.ts';

export const READ_SLICE = 8 * 1024 * 1024;

export class PeerReadError extends RoomError {
  override name = 'PeerReadError';
  override readonly code = 'peer-read';
}

type Pending = { resolve: (b: Uint8Array) => void; reject: (e: Error) => void; what: string };

/** Guest side: a ModelSource whose reads go to the host. */
export class PeerModelSource implements ModelSource {
  readonly label: string;
  readonly modelFile?: string;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Reads asked of the host and not yet answered, and those waiting for a turn. */
  private inFlight = 0;
  private readonly turns: (() => void)[] = [];

  /** `modelFile`: the host's model is this GGUF file (from the assign frame). */
  constructor(hostLabel: string, private readonly send: (f: FrameOf<'read'>) => Promise<void>, modelFile?: string) {
    this.label = `${hostLabel} (from the host)`;
    if (modelFile) this.modelFile = modelFile;
  }

  /** At most READS_AT_ONCE reads are asked of the host at a time (it refuses a guest that floods it). */
  private async request(op: FrameOf<'read'>['op'], path: string, start: number, end: number): Promise<Uint8Array> {
    while (this.inFlight >= READS_AT_ONCE) await new Promise<void>((r) => this.turns.push(r));
    this.inFlight++;
    try {
      return await this.ask(op, path, start, end);
    } finally {
      this.inFlight--;
      this.turns.shift()?.();
    }
  }

  private ask(op: FrameOf<'read'>['op'], path: string, start: number, end: number): Promise<Uint8Array> {
    const id = this.nextId++;
    const what = `${path}${op === 'range' ? ` bytes [${start}, ${end})` : ''}`;
    return new Promise<Uint8Array>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, what });
      this.send({ kind: 'read', id, op, path, start, end }).catch((e: Error) => {
        this.pending.delete(id);
        reject(new PeerReadError(`${what}: could not ask the host (${e.message})`));
      });
    });
  }

  /** Route a `data` frame to its read. Returns false for an id nobody asked for. */
  answer(f: FrameOf<'data'>): boolean {
    const p = this.pending.get(f.id);
    if (!p) return false;
    this.pending.delete(f.id);
    if (f.ok) p.resolve(f.bytes);
    else p.reject(new PeerReadError(`${p.what}: the host could not read it (${f.message})`));
    return true;
  }

  /** The host went away: fail every read in flight. */
  failAll(why: string): void {
    for (const [id, p] of this.pending) { this.pending.delete(id); p.reject(new PeerReadError(`${p.what}: ${why}`)); }
  }

  readFile(path: string): Promise<Uint8Array> { return this.request('file', path, 0, 0); }
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    if (end - start <= READ_SLICE) return this.request('range', path, start, end);
    const parts: Promise<Uint8Array>[] = [];
    for (let at = start; at < end; at += READ_SLICE) parts.push(this.request('range', path, at, Math.min(end, at + READ_SLICE)));
    const out = new Uint8Array(end - start);
    let at = 0;
    for (const p of await Promise.all(parts)) { out.set(p, at); at += p.length; }
    return out;
  }
  async exists(path: string): Promise<boolean> { return (await this.request('exists', path, 0, 0))[0] === 1; }
  async size(path: string): Promise<number> {
    const b = await this.request('size', path, 0, 0);
    if (b.byteLength !== 8) throw new PeerReadError(`${path}: the host sent ${b.byteLength} bytes for a file size`);
    return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
  }
}

/** Host side: answer one `read` frame from the host's source. Whole files are limited to READ_SLICE. */
export async function serveRead(source: ModelSource, f: FrameOf<'read'>): Promise<FrameOf<'data'>> {
  try {
    let bytes: Uint8Array;
    if (f.op === 'exists') bytes = new Uint8Array([(await source.exists(f.path)) ? 1 : 0]);
    else if (f.op === 'size') {
      if (!source.size) throw new PeerReadError(`${source.label} cannot tell file sizes`);
      bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setFloat64(0, await source.size(f.path), true);
    }
    else if (f.op === 'file') {
      // The size is checked before reading (sources that can tell) or while reading (HTTP): never read whole.
      bytes = await source.readFile(f.path, { maxBytes: READ_SLICE }).catch((e: unknown) => {
        if (e instanceof FileTooLongError) throw new PeerReadError(`${f.path} is over ${READ_SLICE} bytes: read it in ranges`);
        throw e;
      });
      if (bytes.length > READ_SLICE) throw new PeerReadError(`${f.path} is ${bytes.length} bytes: read it in ranges`);
    } else {
      if (f.end - f.start > READ_SLICE) throw new PeerReadError(`range of ${f.end - f.start} bytes is over the ${READ_SLICE}-byte limit`);
      bytes = await source.readRange(f.path, f.start, f.end);
    }
    return { kind: 'data', id: f.id, ok: true, message: '', bytes };
  } catch (e) {
    return { kind: 'data', id: f.id, ok: false, message: (e as Error).message, bytes: new Uint8Array(0) };
  }
}

/** Model reads one guest may have served at once, and waiting behind them; more are refused. */
export const READS_AT_ONCE = 4;
export const READS_WAITING = 16;

/**
 * Host side, one per guest: its `read` frames are served at most READS_AT_ONCE at a time (each holds up to
 * READ_SLICE bytes until its answer is handed to the link), READS_WAITING more wait, and the rest are
 * refused at once, so no guest can make the host read and hold an unbounded amount.
 */
export class ReadRation {
  private running = 0;
  private readonly waiting: FrameOf<'read'>[] = [];

  constructor(private readonly source: ModelSource, private readonly send: (answer: FrameOf<'data'>) => Promise<void>) {}

  push(f: FrameOf<'read'>): void {
    if (this.waiting.length >= READS_WAITING) {
      const message = `too many reads at once (${READS_AT_ONCE} running, ${READS_WAITING} waiting): wait for the answers`;
      void this.send({ kind: 'data', id: f.id, ok: false, message, bytes: new Uint8Array(0) }).catch(() => undefined);
      return;
    }
    this.waiting.push(f);
    this.pump();
  }

  private pump(): void {
    while (this.running < READS_AT_ONCE && this.waiting.length > 0) {
      const f = this.waiting.shift()!;
      this.running++;
      void serveRead(this.source, f)
        .then((answer) => this.send(answer))
        .catch(() => undefined) // the channel closed: the device is being lost anyway
        .finally(() => { this.running--; this.pump(); });
    }
  }
}
