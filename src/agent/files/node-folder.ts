// ProjectFiles over a folder on disk (Node only: the CLI). Paths are validated before they touch the
// disk, and the folder may have been prepared by someone hostile, so:
//  * .git/ and node_modules/ are not part of the project as the agent sees it: any path with such a
//    segment is refused for reading and writing alike (writing .git/config would run a command on the
//    user's next `git status`, through core.fsmonitor).
//  * links are never followed: every component of a path is lstat'ed, and a symlink anywhere (dangling
//    included) is refused; a file with a second hard link (which may live outside the project) too.
//  * a write goes to a fresh temp file beside the target (created exclusively, so never through a link)
//    and is renamed over it after the path is checked again, so a link put in place meanwhile is
//    replaced, not followed.
//  * an error names the project-relative path only (fs-errors.ts: Node's own messages hold the absolute
//    one), and a write that fails removes the folders it created on its way.
import { chmod, lstat, mkdir, open, readdir, realpath, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import nodePath from 'node:path';
import type { FileEntry, ProjectFiles } from './types.ts';
import { ChangeListeners } from './listing.ts';
import { projectFsError } from './fs-errors.ts';
import { normalizeFilePath, normalizeProjectPath, ProjectFileError, ProjectPathError } from './paths.ts';

/** Folders that belong to tools, not to the project (compared case-insensitively: macOS and Windows fold case). */
const RESERVED = new Set(['.git', 'node_modules']);
/** O_NOFOLLOW where the platform has it (not on Windows, where symlinks need privileges anyway). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const TEMP_SUFFIX = '.pooled-tmp';

export class NodeFolderFiles implements ProjectFiles {
  private listeners = new ChangeListeners();
  private constructor(readonly root: string) {}

  /** root must exist; it is created when create is true. */
  static async open(root: string, options: { create?: boolean } = {}): Promise<NodeFolderFiles> {
    if (options.create) await mkdir(root, { recursive: true });
    const real = await realpath(root).catch(() => {
      throw new ProjectFileError(root, 'is not a folder on this machine');
    });
    if (!(await stat(real)).isDirectory()) throw new ProjectFileError(root, 'is not a folder');
    return new NodeFolderFiles(real);
  }

  /** A validated project path that names nothing reserved. */
  private static checked(path: string, normalize: (p: string) => string): string {
    const p = normalize(path);
    const reserved = p.split('/').find((s) => RESERVED.has(s.toLowerCase()));
    if (reserved !== undefined) {
      throw new ProjectPathError(path, `is inside ${reserved}/, which belongs to ${reserved.toLowerCase() === '.git' ? 'git' : 'npm'}, not to the project`);
    }
    return p;
  }

  private abs(p: string): string {
    return p === '' ? this.root : nodePath.join(this.root, ...p.split('/'));
  }

  /**
   * lstat of every component of p below the root: refuses a link anywhere (dangling included) and a
   * non-folder on the way. Returns the last component's stats, or null when it (or a parent) is missing.
   */
  private async walk(p: string): Promise<Stats | null> {
    if (p === '') return lstat(this.root);
    const parts = p.split('/');
    let at = this.root;
    let st: Stats | null = null;
    for (let i = 0; i < parts.length; i++) {
      at = nodePath.join(at, parts[i]!);
      st = await lstat(at).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
        throw e;
      });
      if (st === null) return null;
      const sofar = parts.slice(0, i + 1).join('/');
      if (st.isSymbolicLink()) {
        throw new ProjectPathError(p, `goes through a link (${JSON.stringify(sofar)}); links are never followed, since they can lead outside the project root`);
      }
      if (i < parts.length - 1 && !st.isDirectory()) throw new ProjectFileError(sofar, `is a file, so ${JSON.stringify(p)} cannot be under it`);
    }
    return st;
  }

  private static checkFile(p: string, st: Stats): void {
    if (st.nlink > 1) throw new ProjectPathError(p, `has ${st.nlink} hard links; such a file may also live outside the project, so it is not used`);
  }

  /** `run`, its fs errors told with project-relative paths only. */
  private async relative<T>(path: string, run: () => Promise<T>): Promise<T> {
    try { return await run(); } catch (e) { throw projectFsError(this.root, path, e); }
  }

  list(dir: string): Promise<FileEntry[]> { return this.relative(dir, () => this.listIn(dir)); }
  readBytes(path: string): Promise<Uint8Array | null> { return this.relative(path, () => this.readBytesIn(path)); }
  write(path: string, content: string | Uint8Array): Promise<void> { return this.relative(path, () => this.writeIn(path, content)); }
  remove(path: string): Promise<void> { return this.relative(path, () => this.removeIn(path)); }

  private async listIn(dir: string): Promise<FileEntry[]> {
    const p = NodeFolderFiles.checked(dir, normalizeProjectPath);
    const st = await this.walk(p);
    if (st === null) throw new ProjectFileError(p, 'is not a folder in the project');
    if (!st.isDirectory()) throw new ProjectFileError(p, 'is a file, not a folder');
    const abs = this.abs(p);
    const dirents = await readdir(abs, { withFileTypes: true });
    const entries: FileEntry[] = [];
    for (const d of dirents) {
      if (RESERVED.has(d.name.toLowerCase()) || d.name.endsWith(TEMP_SUFFIX)) continue; // a crashed write's temp file is not the project's
      const path = p === '' ? d.name : `${p}/${d.name}`;
      // Links (d.isSymbolicLink()) are neither files nor folders here: they are left out.
      if (d.isDirectory()) entries.push({ path, name: d.name, kind: 'dir', size: 0 });
      else if (d.isFile()) entries.push({ path, name: d.name, kind: 'file', size: (await lstat(nodePath.join(abs, d.name))).size });
    }
    const byName = (a: FileEntry, b: FileEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    return [...entries.filter((e) => e.kind === 'dir').sort(byName), ...entries.filter((e) => e.kind === 'file').sort(byName)];
  }

  async allFiles(): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await this.list(dir)) {
        if (entry.kind === 'dir') await walk(entry.path);
        else out.push(entry.path);
      }
    };
    await walk('');
    return out.sort();
  }

  async readText(path: string): Promise<string | null> {
    const bytes = await this.readBytes(path);
    return bytes ? new TextDecoder('utf-8').decode(bytes) : null;
  }

  private async readBytesIn(path: string): Promise<Uint8Array | null> {
    const p = NodeFolderFiles.checked(path, normalizeFilePath);
    const st = await this.walk(p);
    if (st === null || !st.isFile()) return null;
    // O_NOFOLLOW: the last component cannot have become a link since the walk; fstat checks the same file.
    const handle = await open(this.abs(p), constants.O_RDONLY | NOFOLLOW).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ELOOP' || e.code === 'EMLINK') throw new ProjectPathError(p, 'became a link; links are never followed');
      if (e.code === 'ENOENT') return null;
      throw e;
    });
    if (handle === null) return null;
    try {
      const now = await handle.stat();
      if (!now.isFile()) return null;
      NodeFolderFiles.checkFile(p, now);
      return new Uint8Array(await handle.readFile());
    } finally {
      await handle.close();
    }
  }

  private async writeIn(path: string, content: string | Uint8Array): Promise<void> {
    const p = NodeFolderFiles.checked(path, normalizeFilePath);
    const existing = await this.walk(p);
    if (existing?.isDirectory()) throw new ProjectFileError(p, 'is a folder: cannot write a file over it');
    if (existing) NodeFolderFiles.checkFile(p, existing);
    const parent = p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '';
    const created: string[] = [];
    try {
      await this.writeUnder(p, parent, existing, content, created);
    } catch (e) {
      // Folders this write made are removed again, deepest first (rmdir: only while still empty).
      for (const dir of created.reverse()) await rmdir(this.abs(dir)).catch(() => undefined);
      throw e;
    }
    this.listeners.emit(p);
  }

  /** write's steps once the path is checked: missing folders (each one made is added to `created`), a temp file, the swap. */
  private async writeUnder(p: string, parent: string, existing: Stats | null, content: string | Uint8Array, created: string[]): Promise<void> {
    const abs = this.abs(p);
    if (parent !== '') {
      // Create missing folders one at a time, each checked: mkdir -p would follow a link on the way.
      const parts = parent.split('/');
      for (let i = 1; i <= parts.length; i++) {
        const sofar = parts.slice(0, i).join('/');
        const st = await this.walk(sofar);
        if (st === null) {
          const made = await mkdir(this.abs(sofar)).then(() => true, (e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; return false; });
          if (made) created.push(sofar);
        }
        else if (!st.isDirectory()) throw new ProjectFileError(sofar, `is a file, so ${JSON.stringify(p)} cannot be created under it`);
      }
    }
    const temp = nodePath.join(nodePath.dirname(abs), `.${nodePath.basename(abs)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    // 'wx' = O_CREAT | O_EXCL: fails on anything already there, a link included.
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, existing ? existing.mode & 0o7777 : 0o666);
    try {
      try {
        await handle.writeFile(content);
        if (existing) await chmod(temp, existing.mode & 0o7777); // open's mode is masked by umask
      } finally {
        await handle.close();
      }
      // Checked again right before the swap: a folder on the way may have been replaced by a link.
      const now = await this.walk(p);
      if (now?.isDirectory()) throw new ProjectFileError(p, 'is a folder: cannot write a file over it');
      if (now) NodeFolderFiles.checkFile(p, now);
      await rename(temp, abs); // replaces the directory entry itself: a link there is replaced, never followed
    } catch (e) {
      await unlink(temp).catch(() => undefined);
      throw e;
    }
  }

  private async removeIn(path: string): Promise<void> {
    const p = NodeFolderFiles.checked(path, normalizeFilePath);
    const st = await this.walk(p);
    if (!st?.isFile()) throw new ProjectFileError(p, 'does not exist');
    await rm(this.abs(p));
    this.listeners.emit(p);
  }

  onChange(listener: (path: string) => void): () => void {
    return this.listeners.add(listener);
  }
}
