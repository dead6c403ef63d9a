// ProjectFiles over a folder on disk (Node only: the CLI). Paths are validated before they touch the
// disk, and real paths are checked so a symlink inside the project cannot lead outside it.
// .git and node_modules are not part of the project as the agent sees it.
import { mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import type { FileEntry, ProjectFiles } from './types.ts';
import { ChangeListeners } from './listing.ts';
import { normalizeFilePath, normalizeProjectPath, ProjectFileError, ProjectPathError } from './paths.ts';

const HIDDEN = new Set(['.git', 'node_modules']);

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

  /** Absolute path of a validated project path, refusing symlinked escapes. */
  private async resolve(path: string): Promise<string> {
    const abs = path === '' ? this.root : nodePath.join(this.root, ...path.split('/'));
    // The nearest part of the path that exists decides where it really leads.
    let probe = abs;
    let real: string | null = null;
    while (real === null) {
      real = await realpath(probe).catch(() => null);
      if (real === null) probe = nodePath.dirname(probe);
    }
    if (real !== this.root && !real.startsWith(this.root + nodePath.sep)) {
      throw new ProjectPathError(path, 'leads outside the project root (through a link)');
    }
    return abs;
  }

  async list(dir: string): Promise<FileEntry[]> {
    const p = normalizeProjectPath(dir);
    const abs = await this.resolve(p);
    const dirents = await readdir(abs, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
      throw new ProjectFileError(p, e.code === 'ENOTDIR' ? 'is a file, not a folder' : 'is not a folder in the project');
    });
    const entries: FileEntry[] = [];
    for (const d of dirents) {
      if (HIDDEN.has(d.name)) continue;
      const path = p === '' ? d.name : `${p}/${d.name}`;
      if (d.isDirectory()) entries.push({ path, name: d.name, kind: 'dir', size: 0 });
      else if (d.isFile()) entries.push({ path, name: d.name, kind: 'file', size: (await stat(nodePath.join(abs, d.name))).size });
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

  async readBytes(path: string): Promise<Uint8Array | null> {
    const abs = await this.resolve(normalizeFilePath(path));
    try {
      return new Uint8Array(await readFile(abs));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
      throw e;
    }
  }

  async write(path: string, content: string | Uint8Array): Promise<void> {
    const p = normalizeFilePath(path);
    const abs = await this.resolve(p);
    if ((await stat(abs).catch(() => null))?.isDirectory()) throw new ProjectFileError(p, 'is a folder: cannot write a file over it');
    await mkdir(nodePath.dirname(abs), { recursive: true }).catch(() => {
      throw new ProjectFileError(p, 'cannot be created: a parent is a file');
    });
    await this.resolve(p); // the parent may be a link made meanwhile
    await writeFile(abs, content);
    this.listeners.emit(p);
  }

  async remove(path: string): Promise<void> {
    const p = normalizeFilePath(path);
    const abs = await this.resolve(p);
    if (!(await stat(abs).catch(() => null))?.isFile()) throw new ProjectFileError(p, 'does not exist');
    await rm(abs);
    this.listeners.emit(p);
  }

  onChange(listener: (path: string) => void): () => void {
    return this.listeners.add(listener);
  }
}
