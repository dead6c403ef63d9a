// A project's files, kept in the browser (IndexedDB) or in memory / a folder in Node.
// Paths are project-relative with '/' separators and no leading './' ("src/game.js"); '' is the root.

export interface FileEntry {
  path: string;                // project-relative
  name: string;                // last segment
  kind: 'file' | 'dir';
  size: number;                // bytes (0 for dirs)
}

export interface ProjectFiles {
  /** Entries directly under dir ('' = root), sorted dirs first then by name. Throws if dir is missing. */
  list(dir: string): Promise<FileEntry[]>;
  /** Every file path in the project, sorted. */
  allFiles(): Promise<string[]>;
  /** UTF-8 text, or null when there is no such file. */
  readText(path: string): Promise<string | null>;
  /** Raw bytes, or null when there is no such file. */
  readBytes(path: string): Promise<Uint8Array | null>;
  /** Creates or replaces a file (parent folders are implicit). */
  write(path: string, content: string | Uint8Array): Promise<void>;
  remove(path: string): Promise<void>;
  /** Called after every write/remove with the changed path. Returns an unsubscribe function. */
  onChange(listener: (path: string) => void): () => void;
}
