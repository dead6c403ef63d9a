// A device keeps every model byte range it loaded, keyed by model + file + byte range (the loader reads
// one tensor per range, so this is a per-tensor cache), so a device that rejoins or is re-dealt the same
// layers reads nothing from the network. CachingSource wraps any ModelSource and counts where bytes came
// from: that count is what the host shows per device and what the byte-accounting test checks.
import { openDB, type IDBPDatabase } from 'idb';
import { FileTooLongError } from '../model/errors.ts';
import type { ModelSource, ReadFileOptions } from '../model/types.ts';

export interface ByteStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  clear(): Promise<void>;
}

export class MemoryByteStore implements ByteStore {
  private readonly map = new Map<string, Uint8Array>();
  async get(key: string): Promise<Uint8Array | undefined> { return this.map.get(key)?.slice(); }
  async put(key: string, bytes: Uint8Array): Promise<void> { this.map.set(key, bytes.slice()); }
  async clear(): Promise<void> { this.map.clear(); }
  get size(): number { return this.map.size; }
}

const DB_NAME = 'pooled-weights';
const STORE = 'ranges';

/** IndexedDB store (browser): one record per byte range. Writes are best effort (quota may refuse). */
export class IndexedDbByteStore implements ByteStore {
  private db: Promise<IDBPDatabase> | undefined;
  private open(): Promise<IDBPDatabase> {
    this.db ??= openDB(DB_NAME, 1, { upgrade: (db) => { db.createObjectStore(STORE); } });
    return this.db;
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    const v = (await (await this.open()).get(STORE, key)) as ArrayBuffer | undefined;
    return v ? new Uint8Array(v) : undefined;
  }
  async put(key: string, bytes: Uint8Array): Promise<void> {
    try {
      await (await this.open()).put(STORE, bytes.slice().buffer, key);
    } catch (e) {
      // A full disk must not fail the load: the device just downloads again next time.
      console.warn(`weight cache: could not store ${key}: ${(e as Error).message}`);
    }
  }
  async clear(): Promise<void> { await (await this.open()).clear(STORE); }
}

export interface ByteCounts {
  networkBytes: number;        // bytes the inner source delivered (network, or the host's data channel)
  cacheBytes: number;          // bytes served from the device's cache
}

/** ModelSource that serves reads from a ByteStore and fills it from `inner`. */
export class CachingSource implements ModelSource {
  readonly label: string;
  readonly modelFile?: string;
  readonly counts: ByteCounts = { networkBytes: 0, cacheBytes: 0 };

  constructor(private readonly inner: ModelSource, private readonly store: ByteStore, private readonly modelKey: string) {
    this.label = inner.label;
    if (inner.modelFile !== undefined) this.modelFile = inner.modelFile;
    if (!inner.size) this.size = undefined;
  }

  /** A file's length, kept in the store like the ranges (a GGUF header read needs it first). */
  size?: (path: string) => Promise<number> = async (path) => {
    const full = `${this.modelKey}|${path}|size`;
    const hit = await this.store.get(full);
    if (hit && hit.byteLength === 8) return new DataView(hit.buffer, hit.byteOffset, 8).getFloat64(0, true);
    const n = await this.inner.size!(path);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, n, true);
    await this.store.put(full, b);
    return n;
  };

  private async cached(key: string, load: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const full = `${this.modelKey}|${key}`;
    const hit = await this.store.get(full);
    if (hit) { this.counts.cacheBytes += hit.length; return hit; }
    const bytes = await load();
    this.counts.networkBytes += bytes.length;
    await this.store.put(full, bytes);
    return bytes;
  }

  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const bytes = await this.cached(`${path}|file`, () => this.inner.readFile(path, opts));
    if (opts.maxBytes !== undefined && bytes.byteLength > opts.maxBytes) {
      throw new FileTooLongError(`is ${bytes.byteLength} bytes (cached), more than the ${opts.maxBytes} it may be`, { file: path }, opts.maxBytes);
    }
    return bytes;
  }
  readRange(path: string, start: number, end: number, onBytes?: (n: number) => void): Promise<Uint8Array> {
    return this.cached(`${path}|${start}-${end}`, () => this.inner.readRange(path, start, end, onBytes));
  }
  async exists(path: string): Promise<boolean> {
    const full = `${this.modelKey}|${path}|exists`;
    const hit = await this.store.get(full);
    if (hit) return hit[0] === 1;
    const yes = await this.inner.exists(path);
    await this.store.put(full, new Uint8Array([yes ? 1 : 0]));
    return yes;
  }
}
