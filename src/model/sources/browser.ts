// Browser folder sources: a FileSystemDirectoryHandle (directory picker) or the files of a picked /
// dropped folder (FileList or File[]). Ranged reads use File.slice, so nothing is read twice.

import { FileTooLongError, ModelSourceError } from '../errors.ts';
import type { ModelSource, ReadFileOptions } from '../types.ts';
import { checkRangeArgs, normalisePath, requireWithin } from './common.ts';

abstract class FileBackedSource implements ModelSource {
  abstract readonly label: string;
  modelFile?: string;
  protected abstract file(path: string): Promise<File | undefined>;

  async size(path: string): Promise<number> {
    return (await this.mustFile(path)).size;
  }

  /** Every file path this source holds (for finding a .gguf in a picked folder). */
  abstract list(): Promise<string[]>;

  private async mustFile(path: string): Promise<File> {
    const f = await this.file(normalisePath(path));
    if (!f) throw new ModelSourceError(`file not found in ${this.label}`, { file: path });
    return f;
  }

  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const f = await this.mustFile(path);
    if (opts.maxBytes !== undefined && f.size > opts.maxBytes) {
      throw new FileTooLongError(`is ${f.size} bytes, more than the ${opts.maxBytes} it may be`, { file: path }, opts.maxBytes);
    }
    return new Uint8Array(await f.arrayBuffer());
  }

  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    checkRangeArgs(this.label, path, start, end);
    const f = await this.mustFile(path);
    requireWithin(path, f.size, start, end);
    return new Uint8Array(await f.slice(start, end).arrayBuffer());
  }

  async exists(path: string): Promise<boolean> {
    return (await this.file(normalisePath(path))) !== undefined;
  }
}

/** A folder the user granted with showDirectoryPicker() (or a dropped directory's handle). */
export class DirectoryHandleSource extends FileBackedSource {
  readonly label: string;
  constructor(private readonly root: FileSystemDirectoryHandle) {
    super();
    this.label = root.name;
  }

  async list(): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: FileSystemDirectoryHandle, prefix: string, depth: number): Promise<void> => {
      if (depth > 4) return;
      for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
        if (handle.kind === 'file') out.push(prefix + name);
        else await walk(handle as FileSystemDirectoryHandle, `${prefix}${name}/`, depth + 1);
      }
    };
    await walk(this.root, '', 0);
    return out;
  }

  protected async file(path: string): Promise<File | undefined> {
    const parts = path.split('/');
    let dir = this.root;
    try {
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
      return await (await dir.getFileHandle(parts[parts.length - 1]!)).getFile();
    } catch (e) {
      if ((e as DOMException).name === 'NotFoundError' || (e as DOMException).name === 'TypeMismatchError') return undefined;
      throw new ModelSourceError(`cannot read from ${this.label}: ${(e as Error).message}`, { file: path, cause: e });
    }
  }
}

/**
 * Files from `<input type=file webkitdirectory>` or a drop. Paths come from webkitRelativePath with the
 * picked folder's own name removed ("Qwen3-1.7B/config.json" → "config.json"), else from File.name.
 */
export class FileListSource extends FileBackedSource {
  readonly label: string;
  private readonly files = new Map<string, File>();

  constructor(list: FileList | readonly File[], label?: string) {
    super();
    const all = Array.from(list as ArrayLike<File>);
    const rel = all.map((f) => normalisePath(f.webkitRelativePath || f.name));
    const firstDirs = new Set(rel.map((p) => (p.includes('/') ? p.split('/')[0] : '')));
    const commonRoot = firstDirs.size === 1 ? [...firstDirs][0]! : '';
    all.forEach((f, i) => this.files.set(commonRoot ? rel[i]!.slice(commonRoot.length + 1) : rel[i]!, f));
    this.label = label ?? (commonRoot || 'dropped files');
  }

  async list(): Promise<string[]> {
    return [...this.files.keys()];
  }

  protected async file(path: string): Promise<File | undefined> {
    return this.files.get(path);
  }
}
