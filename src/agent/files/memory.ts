// ProjectFiles kept in memory (tests, the CLI's scratch projects). Folders are implicit.
import type { FileEntry, ProjectFiles } from './types.ts';
import { ChangeListeners, checkWritable, listFromPaths, toBytes, toText } from './listing.ts';
import { normalizeFilePath, normalizeProjectPath, ProjectFileError } from './paths.ts';

export class MemoryFiles implements ProjectFiles {
  private files = new Map<string, Uint8Array>();
  private listeners = new ChangeListeners();

  /** Optional initial files: { "index.html": "<!doctype html>…" }. */
  constructor(initial: Record<string, string | Uint8Array> = {}) {
    for (const [path, content] of Object.entries(initial)) this.files.set(normalizeFilePath(path), toBytes(content));
  }

  async list(dir: string): Promise<FileEntry[]> {
    const sizes = new Map([...this.files].map(([p, b]) => [p, b.byteLength] as const));
    return listFromPaths(sizes, normalizeProjectPath(dir));
  }
  async allFiles(): Promise<string[]> {
    return [...this.files.keys()].sort();
  }
  async readText(path: string): Promise<string | null> {
    const bytes = this.files.get(normalizeFilePath(path));
    return bytes ? toText(bytes) : null;
  }
  async readBytes(path: string): Promise<Uint8Array | null> {
    const bytes = this.files.get(normalizeFilePath(path));
    return bytes ? new Uint8Array(bytes) : null;
  }
  async write(path: string, content: string | Uint8Array): Promise<void> {
    const p = normalizeFilePath(path);
    checkWritable(this.files.keys(), p);
    this.files.set(p, toBytes(content));
    this.listeners.emit(p);
  }
  async remove(path: string): Promise<void> {
    const p = normalizeFilePath(path);
    if (!this.files.delete(p)) throw new ProjectFileError(p, 'does not exist');
    this.listeners.emit(p);
  }
  onChange(listener: (path: string) => void): () => void {
    return this.listeners.add(listener);
  }
}
