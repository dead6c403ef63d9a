// What `serve(path)` names: a folder (its index.html) or an .html file inside one.
import type { ProjectFiles } from '../agent/files/types.ts';
import { PreviewError } from './types.ts';

export interface ServeTarget {
  folder: string;
  page: string;
}

export async function splitServeTarget(files: ProjectFiles, target: string): Promise<ServeTarget> {
  const clean = String(target ?? '').trim().replace(/^\.\/+/, '').replace(/^\/+/, '').replace(/\/+$/, '').replace(/^\.$/, '');
  if (clean.includes('..') || clean.includes('\\') || clean.includes('\0')) {
    throw new PreviewError(`cannot serve "${target}": give a folder inside the project, like "" or "app"`);
  }
  if (/\.html?$/i.test(clean) && (await files.readBytes(clean)) !== null) {
    const cut = clean.lastIndexOf('/');
    return { folder: cut < 0 ? '' : clean.slice(0, cut), page: clean.slice(cut + 1) };
  }
  try {
    await files.list(clean);
  } catch {
    throw new PreviewError(`cannot serve "${target}": there is no such folder in the project`);
  }
  return { folder: clean, page: 'index.html' };
}
