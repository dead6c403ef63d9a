// ProjectFiles in the browser's IndexedDB (idb): one database per project, "pooled-project:<id>", with a
// single object store "files" keyed by project path, values { bytes: Uint8Array, mtime: number }.
import { deleteDB, openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { FileEntry, ProjectFiles } from './types.ts';
import { ChangeListeners, checkWritable, listFromPaths, toBytes, toText } from './listing.ts';
import { normalizeFilePath, normalizeProjectPath, ProjectFileError } from './paths.ts';

interface FilesSchema extends DBSchema {
  files: { key: string; value: { bytes: Uint8Array; mtime: number } };
}

export const projectDatabaseName = (projectId: string): string => `pooled-project:${projectId}`;

export class IdbFiles implements ProjectFiles {
  private listeners = new ChangeListeners();
  private constructor(readonly projectId: string, private db: IDBPDatabase<FilesSchema>) {}

  /** Opens (creating on first use) the project's store. */
  static async open(projectId: string): Promise<IdbFiles> {
    if (!projectId) throw new ProjectFileError('', 'needs a project id to open its IndexedDB store');
    const db = await openDB<FilesSchema>(projectDatabaseName(projectId), 1, {
      upgrade(database) {
        database.createObjectStore('files');
      },
    });
    return new IdbFiles(projectId, db);
  }

  /** Deletes a project's whole store (the "delete project" action). */
  static async deleteProject(projectId: string): Promise<void> {
    await deleteDB(projectDatabaseName(projectId));
  }

  close(): void {
    this.db.close();
  }

  private async sizes(): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    let cursor = await this.db.transaction('files').store.openCursor();
    while (cursor) {
      sizes.set(cursor.key, cursor.value.bytes.byteLength);
      cursor = await cursor.continue();
    }
    return sizes;
  }

  async list(dir: string): Promise<FileEntry[]> {
    return listFromPaths(await this.sizes(), normalizeProjectPath(dir));
  }
  async allFiles(): Promise<string[]> {
    return ((await this.db.getAllKeys('files')) as string[]).sort();
  }
  async readText(path: string): Promise<string | null> {
    const bytes = await this.readBytes(path);
    return bytes ? toText(bytes) : null;
  }
  async readBytes(path: string): Promise<Uint8Array | null> {
    const record = await this.db.get('files', normalizeFilePath(path));
    return record ? new Uint8Array(record.bytes) : null;
  }
  async write(path: string, content: string | Uint8Array): Promise<void> {
    const p = normalizeFilePath(path);
    const tx = this.db.transaction('files', 'readwrite');
    checkWritable((await tx.store.getAllKeys()) as string[], p);
    await tx.store.put({ bytes: toBytes(content), mtime: Date.now() }, p);
    await tx.done;
    this.listeners.emit(p);
  }
  async remove(path: string): Promise<void> {
    const p = normalizeFilePath(path);
    const tx = this.db.transaction('files', 'readwrite');
    if ((await tx.store.getKey(p)) === undefined) throw new ProjectFileError(p, 'does not exist');
    await tx.store.delete(p);
    await tx.done;
    this.listeners.emit(p);
  }
  onChange(listener: (path: string) => void): () => void {
    return this.listeners.add(listener);
  }
}
