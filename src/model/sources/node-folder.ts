// Node only: a model folder on disk. Ranged reads go through a file handle (no whole-file reads).
// Kept apart so the browser bundle never pulls in node:fs (resolve.ts imports this lazily).

import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve as resolvePath } from 'node:path';
import { FileTooLongError, ModelSourceError, TruncatedFileError } from '../errors.ts';
import type { ModelSource, ReadFileOptions } from '../types.ts';
import { checkRangeArgs, normalisePath } from './common.ts';
import { pickGgufFile } from './gguf-files.ts';

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

  async readFile(path: string, opts: ReadFileOptions = {}): Promise<Uint8Array> {
    const fh = await this.open(path);
    try {
      const { size } = await fh.stat();
      if (opts.maxBytes !== undefined && size > opts.maxBytes) {
        throw new FileTooLongError(`is ${size} bytes, more than the ${opts.maxBytes} it may be`, { file: path }, opts.maxBytes);
      }
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

async function filesUnder(root: string, dir = root, depth = 0): Promise<string[]> {
  if (depth > 3) return [];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isFile()) out.push(relative(root, join(dir, e.name)).split('\\').join('/'));
    else if (e.isDirectory()) out.push(...await filesUnder(root, join(dir, e.name), depth + 1));
  }
  return out;
}

/**
 * A local GGUF model: "model.gguf" (a file), "folder" holding one GGUF model and no config.json, or
 * "folder:Q4_K_M" picking one by quant. Undefined when `spec` is none of these.
 */
export async function localGgufSource(spec: string): Promise<NodeFolderSource | undefined> {
  const fileStat = await stat(spec).catch(() => undefined);
  if (fileStat?.isFile()) return /\.gguf$/i.test(spec) ? new NodeFolderSource(dirname(spec), basename(spec)) : undefined;
  const colon = spec.lastIndexOf(':');
  const [folder, pick] = !fileStat && colon > 1 ? [spec.slice(0, colon), spec.slice(colon + 1)] : [spec, undefined];
  if (!(await isFolder(folder))) return undefined;
  if (pick === undefined && ((await stat(join(folder, 'config.json')).catch(() => null)) || (await stat(join(folder, 'mlc-chat-config.json')).catch(() => null)))) return undefined;
  const files = await filesUnder(folder);
  if (pick === undefined && !files.some((f) => /\.gguf$/i.test(f))) return undefined;
  return new NodeFolderSource(folder, pickGgufFile(files, pick, folder));
}
