// Node only: a model folder on disk. Ranged reads go through a file handle (no whole-file reads).
// Kept apart so the browser bundle never pulls in node:fs (resolve.ts imports this lazily).

import { open, stat } from 'node:fs/promises';
import { resolve as resolvePath, join } from 'node:path';
import { ModelSourceError, TruncatedFileError } from '../errors.ts';
import type { ModelSource } from '../types.ts';
import { checkRangeArgs, normalisePath } from './common.ts';

export class NodeFolderSource implements ModelSource {
  readonly label: string;
  readonly root: string;
  readonly modelFile?: string;

  /** `modelFile`: the model is this GGUF file inside the folder (see ModelSource.modelFile). */
  constructor(folder: string, modelFile?: string) {
    this.root = resolvePath(folder);
    this.label = modelFile ? join(this.root, modelFile) : this.root;
    if (modelFile !== undefined) this.modelFile = modelFile;
  }

  async size(path: string): Promise<number> {
    try {
      return (await stat(this.full(path))).size;
    } catch (e) {
      throw new ModelSourceError(`file not found: ${this.full(path)}`, { file: path, cause: e });
    }
  }

  private full(path: string): string {
    return join(this.root, normalisePath(path));
  }

  async readFile(path: string): Promise<Uint8Array> {
    const fh = await this.open(path);
    try {
      return new Uint8Array(await fh.readFile());
    } finally {
      await fh.close();
    }
  }

  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    checkRangeArgs(this.label, path, start, end);
    const fh = await this.open(path);
    try {
      const out = new Uint8Array(end - start);
      let done = 0;
      while (done < out.byteLength) {
        const { bytesRead } = await fh.read(out, done, out.byteLength - done, start + done);
        if (bytesRead === 0) {
          throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is only ${start + done} bytes long`, { file: path, fileSize: start + done });
        }
        done += bytesRead;
      }
      return out;
    } finally {
      await fh.close();
    }
  }

  async exists(path: string): Promise<boolean> {
    try {
      return (await stat(this.full(path))).isFile();
    } catch {
      return false;
    }
  }

  private async open(path: string) {
    const full = this.full(path);
    try {
      return await open(full, 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const what = code === 'ENOENT' ? 'file not found' : `cannot open (${code ?? (e as Error).message})`;
      throw new ModelSourceError(`${what}: ${full}`, { file: path, cause: e });
    }
  }
}

/** True when `path` is an existing directory. */
export async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
