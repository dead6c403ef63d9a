// Shared by the stores that keep a flat map of file paths: folders are implicit (a folder exists when a
// file lies under it), so a listing is derived from the sorted file paths.
import type { FileEntry } from './types.ts';
import { ProjectFileError } from './paths.ts';

/** Entries directly under dir, dirs first then by name. Throws ProjectFileError when dir is missing. */
export function listFromPaths(files: Map<string, number>, dir: string): FileEntry[] {
  if (dir !== '' && files.has(dir)) throw new ProjectFileError(dir, 'is a file, not a folder');
  const prefix = dir === '' ? '' : dir + '/';
  const dirs = new Set<string>();
  const entries: FileEntry[] = [];
  for (const [path, size] of files) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash < 0) entries.push({ path, name: rest, kind: 'file', size });
    else dirs.add(rest.slice(0, slash));
  }
  if (dir !== '' && entries.length === 0 && dirs.size === 0) throw new ProjectFileError(dir, 'is not a folder in the project');
  const dirEntries: FileEntry[] = [...dirs].map((name) => ({ path: prefix + name, name, kind: 'dir', size: 0 }));
  return [...sortByName(dirEntries), ...sortByName(entries)];
}

function sortByName(entries: FileEntry[]): FileEntry[] {
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A tiny listener set: onChange(listener) returns its own unsubscribe. */
export class ChangeListeners {
  private listeners = new Set<(path: string) => void>();
  add(listener: (path: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(path: string): void {
    for (const listener of [...this.listeners]) listener(path);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');
export const toBytes = (content: string | Uint8Array): Uint8Array =>
  typeof content === 'string' ? encoder.encode(content) : new Uint8Array(content);
export const toText = (bytes: Uint8Array): string => decoder.decode(bytes);

/** Refuses a write that would put a file over a folder or under a file (kept flat, so checked by path). */
export function checkWritable(existing: Iterable<string>, path: string): void {
  const ancestors = new Set<string>();
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) ancestors.add(path.slice(0, i));
  for (const other of existing) {
    if (other.startsWith(path + '/')) throw new ProjectFileError(path, 'is a folder: cannot write a file over it');
    if (ancestors.has(other)) throw new ProjectFileError(other, `is a file, so ${JSON.stringify(path)} cannot be created under it`);
  }
}
