// One entry point for "where is the model": HF id, http(s) URL, local folder (Node), or a folder the
// user picked / dropped in the browser.

import { ModelSourceError } from '../errors.ts';
import type { ModelSource } from '../types.ts';
import { DirectoryHandleSource, FileListSource } from './browser.ts';
import { HttpModelSource, type HttpSourceOptions } from './http.ts';

export type ModelSourceSpec = string | FileSystemDirectoryHandle | FileList | readonly File[] | ModelSource;

export interface ResolveOptions {
  /** Hugging Face endpoint (a mirror, or a local server in tests). */
  hfEndpoint?: string;
  fetch?: typeof fetch;
  /**
   * Base URL for relative paths ("/models/tiny", "./m"). In a browser it defaults to location.href, so a
   * path names a folder on the page's own server; in Node paths are local folders unless this is set.
   */
  base?: string;
}

/** "Qwen/Qwen3-1.7B" or "Qwen/Qwen3-1.7B@<revision>" */
const HF_ID = /^([A-Za-z0-9][\w.-]*)\/([\w.-]+)(?:@([\w./-]+))?$/;

export function parseHfId(spec: string): { repo: string; revision: string } | null {
  const m = HF_ID.exec(spec);
  if (!m) return null;
  return { repo: `${m[1]}/${m[2]}`, revision: m[3] ?? 'main' };
}

/** An HF model repo read through https://huggingface.co/{id}/resolve/{revision}/{file}. */
export function huggingFaceSource(repo: string, revision = 'main', opts: ResolveOptions = {}): HttpModelSource {
  const endpoint = (opts.hfEndpoint ?? 'https://huggingface.co').replace(/\/+$/, '');
  const base = `${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}`;
  const httpOpts: HttpSourceOptions = { label: `${repo}@${revision}` };
  if (opts.fetch) httpOpts.fetch = opts.fetch;
  return new HttpModelSource(base, httpOpts);
}

function isNode(): boolean {
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string';
}

function looksLikePath(spec: string): boolean {
  return /^(\/|\.{1,2}(\/|$)|~|[A-Za-z]:[\\/])/.test(spec) || spec.includes('\\');
}

// A variable specifier keeps bundlers from following this import into node:fs.
const NODE_FOLDER_MODULE = './node-folder.ts';

async function nodeFolder(): Promise<typeof import('./node-folder.ts')> {
  return import(/* @vite-ignore */ NODE_FOLDER_MODULE);
}

/**
 * Resolve a user's model spec to a ModelSource.
 * Strings: "http(s)://…" is a base URL; in a browser a path ("/…", "./…") is a URL on the page's
 * server; in Node a path (or any existing folder) is a local folder; "owner/name[@rev]" is a Hugging
 * Face model id.
 */
export async function resolveModelSource(spec: ModelSourceSpec, opts: ResolveOptions = {}): Promise<ModelSource> {
  if (typeof spec !== 'string') {
    if (Array.isArray(spec) || (typeof FileList !== 'undefined' && spec instanceof FileList)) {
      return new FileListSource(spec as FileList | readonly File[]);
    }
    if ('getDirectoryHandle' in (spec as object)) return new DirectoryHandleSource(spec as FileSystemDirectoryHandle);
    return spec as ModelSource;
  }
  const s = spec.trim();
  if (/^https?:\/\//i.test(s)) {
    return new HttpModelSource(s, opts.fetch ? { fetch: opts.fetch } : {});
  }
  const base = opts.base ?? (isNode() ? undefined : (globalThis as { location?: { href: string } }).location?.href);
  if (base !== undefined && /^(\/|\.{1,2}\/)/.test(s)) {
    const url = new URL(s, base).href;
    return new HttpModelSource(url, opts.fetch ? { fetch: opts.fetch } : {});
  }
  if (isNode()) {
    const { NodeFolderSource, isFolder } = await nodeFolder();
    if (looksLikePath(s) || (await isFolder(s))) {
      if (!(await isFolder(s))) throw new ModelSourceError(`no such folder: ${s}`, { file: s });
      return new NodeFolderSource(s);
    }
  }
  const hf = parseHfId(s);
  if (hf) return huggingFaceSource(hf.repo, hf.revision, opts);
  throw new ModelSourceError(
    `"${s}" is not a model source: use a Hugging Face id (owner/name[@revision]), an http(s) URL, or a local folder`,
    { file: s });
}
