// Project history: before every change to a project file (the agent's write_file / edit_file, a hand edit
// saved in the file pane, a restore) the file's previous bytes, or "it did not exist", are kept as one
// point. Restoring to a point undoes every later point, newest first, so the files are exactly as they
// were just before it; the restore is itself recorded, so it can be undone the same way.
//
// Only what changes is kept (one file's previous content per point), never the whole project. Bounded per
// project: at most HISTORY_LIMITS.points points and HISTORY_LIMITS.bytes bytes of kept content; the oldest
// points are dropped first (the newest one always stays, however large). Points live in IndexedDB
// (IdbHistoryStorage, one database for all projects, keyed [projectId, id]) so they survive a reload; what is
// read back is checked (readPoint) and an entry that is not a point (an old build's, a broken write) is
// skipped and deleted, never trusted.
import { deleteDB, openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { FileEntry, ProjectFiles } from '../agent/files/types.ts';
import { normalizeFilePath } from '../agent/files/paths.ts';

export const HISTORY_LIMITS = { points: 200, bytes: 8 * 1024 * 1024, labelChars: 200 } as const;

/** One file as it was before a point's change: its bytes, or null when it did not exist. */
export interface HistoryChange { path: string; before: Uint8Array | null }

/** Which change a point was taken before: the agent's call (request, step, call id) or a hand edit / restore. */
export interface PointOrigin {
  label: string;               // "write_file app.js", "hand edit of index.html", "restore to before …"
  request?: number;
  step?: number;
  call?: number;
}

export interface HistoryPoint extends PointOrigin {
  id: number;                  // increasing within a project: the order the changes happened in
  at: number;                  // Date.now() when it was taken
  changes: HistoryChange[];
}

/** What a restore did: the point restored to, the files written back and those removed (they did not exist then). */
export interface RestoreResult { point: HistoryPoint; written: string[]; removed: string[] }

/** Where points are kept: IndexedDB in the app, memory in unit tests. */
export interface HistoryStorage {
  /** Every stored value for the project, unchecked (the reader checks them). */
  load(): Promise<{ key: unknown; value: unknown }[]>;
  put(point: HistoryPoint): Promise<void>;
  remove(keys: unknown[]): Promise<void>;
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** A stored value as a point, or null when it is not one (wrong shapes, a path the project would refuse). */
export function readPoint(value: unknown): HistoryPoint | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!isCount(v.id) || v.id === 0 || typeof v.at !== 'number' || !Number.isFinite(v.at)) return null;
  if (typeof v.label !== 'string' || v.label.length > HISTORY_LIMITS.labelChars) return null;
  for (const k of ['request', 'step', 'call'] as const) if (v[k] !== undefined && !isCount(v[k])) return null;
  if (!Array.isArray(v.changes) || v.changes.length === 0) return null;
  const changes: HistoryChange[] = [];
  for (const c of v.changes as unknown[]) {
    if (typeof c !== 'object' || c === null) return null;
    const { path, before } = c as Record<string, unknown>;
    if (typeof path !== 'string' || !(before === null || before instanceof Uint8Array)) return null;
    try {
      if (normalizeFilePath(path) !== path) return null;
    } catch {
      return null;
    }
    changes.push({ path, before });
  }
  const point: HistoryPoint = { id: v.id, at: v.at, label: v.label, changes };
  for (const k of ['request', 'step', 'call'] as const) if (v[k] !== undefined) point[k] = v[k] as number;
  return point;
}

/** A point a restore took (restoring to before it undoes that restore). */
export const isRestore = (p: PointOrigin): boolean => p.step === undefined && /^(restore to before|undo of) /.test(p.label);
const pointBytes = (p: HistoryPoint) => p.changes.reduce((sum, c) => sum + (c.before?.byteLength ?? 0), 0);
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

export class ProjectHistory {
  private readonly list: HistoryPoint[];
  private readonly listeners = new Set<() => void>();
  /** Writes to the storage one after another (a point's id follows the last one's). */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly storage: HistoryStorage, points: HistoryPoint[], readonly skipped: number) {
    this.list = points;
  }

  /** Reads the project's points; entries that are not points are skipped and deleted. */
  static async open(storage: HistoryStorage): Promise<ProjectHistory> {
    const rows = await storage.load();
    const good: HistoryPoint[] = [];
    const bad: unknown[] = [];
    for (const { key, value } of rows) {
      const point = readPoint(value);
      if (point && !good.some((p) => p.id === point.id)) good.push(point);
      else bad.push(key);
    }
    if (bad.length > 0) await storage.remove(bad).catch(() => undefined);  // best effort: they are skipped anyway
    good.sort((a, b) => a.id - b.id);
    return new ProjectHistory(storage, good, bad.length);
  }

  /** The points, oldest first. */
  get points(): readonly HistoryPoint[] {
    return this.list;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keeps one point: the files' contents before a change about to be written. */
  record(origin: PointOrigin, changes: HistoryChange[]): Promise<HistoryPoint> {
    return this.serially(async () => {
      const id = (this.list[this.list.length - 1]?.id ?? 0) + 1;
      const point: HistoryPoint = { ...origin, label: origin.label.slice(0, HISTORY_LIMITS.labelChars), id, at: Date.now(), changes };
      await this.storage.put(point);
      this.list.push(point);
      await this.trim();
      this.emit();
      return point;
    });
  }

  /**
   * Puts the files back as they were just before point `id`: every later change undone, newest first
   * (so each file gets the content it had before the earliest of them). The files' state now is recorded
   * first as a "restore" point, so this too can be undone.
   */
  async restore(files: ProjectFiles, id: number): Promise<RestoreResult> {
    const point = this.list.find((p) => p.id === id);
    if (!point) throw new Error(`no history point ${id} (it may have been dropped as the oldest)`);
    const target = new Map<string, Uint8Array | null>();
    for (const p of this.list.filter((q) => q.id >= id).reverse()) {
      for (const c of [...p.changes].reverse()) target.set(c.path, c.before);
    }
    const now: HistoryChange[] = [];
    for (const [path, before] of target) {
      const current = await files.readBytes(path);
      if (current === null ? before !== null : before === null || !sameBytes(current, before)) now.push({ path, before: current });
    }
    const written: string[] = [];
    const removed: string[] = [];
    if (now.length === 0) return { point, written, removed };
    // Restoring to before a restore undoes it: "undo of restore to before …" reads better than nesting.
    await this.record({ label: isRestore(point) ? `undo of ${point.label}` : `restore to before ${point.label}` }, now);
    for (const { path } of now) {
      const before = target.get(path)!;
      if (before === null) {
        await files.remove(path);
        removed.push(path);
      } else {
        await files.write(path, before);
        written.push(path);
      }
    }
    return { point, written: written.sort(), removed: removed.sort() };
  }

  /** Oldest points dropped until the limits hold (the newest always stays). */
  private async trim(): Promise<void> {
    let bytes = this.list.reduce((sum, p) => sum + pointBytes(p), 0);
    const drop: HistoryPoint[] = [];
    while (this.list.length > 1 && (this.list.length > HISTORY_LIMITS.points || bytes > HISTORY_LIMITS.bytes)) {
      const oldest = this.list.shift()!;
      bytes -= pointBytes(oldest);
      drop.push(oldest);
    }
    if (drop.length > 0) await this.storage.remove(drop.map((p) => p.id));
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private emit(): void {
    for (const l of [...this.listeners]) l();
  }
}

/**
 * The project's files with a history point taken before every write and remove that changes something.
 * `origin` says what is writing (the agent call running now, or a hand edit). A point that cannot be kept
 * (storage full, closed) does not stop the write: the work matters more than its undo.
 */
export function recordingFiles(files: ProjectFiles, history: ProjectHistory, origin: (path: string) => PointOrigin): ProjectFiles {
  const keep = async (path: string, after: Uint8Array | null) => {
    try {
      const p = normalizeFilePath(path);
      const before = await files.readBytes(p);
      if (before === null ? after === null : after !== null && sameBytes(before, after)) return;
      await history.record(origin(p), [{ path: p, before }]);
    } catch {
      // a bad path is refused by the write itself, with its own message; a storage failure loses only this point
    }
  };
  return {
    list: (dir: string): Promise<FileEntry[]> => files.list(dir),
    allFiles: () => files.allFiles(),
    readText: (path) => files.readText(path),
    readBytes: (path) => files.readBytes(path),
    write: async (path, content) => {
      await keep(path, typeof content === 'string' ? new TextEncoder().encode(content) : content);
      await files.write(path, content);
    },
    remove: async (path) => {
      await keep(path, null);
      await files.remove(path);
    },
    onChange: (listener) => files.onChange(listener),
  };
}

export class MemoryHistoryStorage implements HistoryStorage {
  readonly rows = new Map<unknown, unknown>();
  async load() {
    return [...this.rows].map(([key, value]) => ({ key, value: structuredClone(value) }));
  }
  async put(point: HistoryPoint) {
    this.rows.set(point.id, structuredClone(point));
  }
  async remove(keys: unknown[]) {
    for (const k of keys) this.rows.delete(k);
  }
}

interface HistorySchema extends DBSchema {
  points: { key: [string, number]; value: HistoryPoint };
}

export const HISTORY_DATABASE = 'pooled-history';

/** Every project's points in one database, store "points", keys [projectId, id]. */
export class IdbHistoryStorage implements HistoryStorage {
  private constructor(private readonly projectId: string, private readonly db: IDBPDatabase<HistorySchema>) {}

  static async open(projectId: string): Promise<IdbHistoryStorage> {
    const db = await openDB<HistorySchema>(HISTORY_DATABASE, 1, {
      upgrade(database) {
        database.createObjectStore('points');
      },
    });
    return new IdbHistoryStorage(projectId, db);
  }

  static deleteAll(): Promise<void> {
    return deleteDB(HISTORY_DATABASE);
  }

  private range(): IDBKeyRange {
    return IDBKeyRange.bound([this.projectId], [this.projectId, []]);   // every key [projectId, anything]
  }

  async load(): Promise<{ key: unknown; value: unknown }[]> {
    const rows: { key: unknown; value: unknown }[] = [];
    let cursor = await this.db.transaction('points').store.openCursor(this.range());
    while (cursor) {
      rows.push({ key: cursor.key, value: cursor.value });
      cursor = await cursor.continue();
    }
    return rows;
  }

  async put(point: HistoryPoint): Promise<void> {
    await this.db.put('points', point, [this.projectId, point.id]);
  }

  /** Keys as load gave them, or a point's id. */
  async remove(keys: unknown[]): Promise<void> {
    const tx = this.db.transaction('points', 'readwrite');
    for (const k of keys) await tx.store.delete((typeof k === 'number' ? [this.projectId, k] : k) as [string, number]);
    await tx.done;
  }
}
