// One entry point for "where is the model": HF id (or "repo:QUANT" for a GGUF repo), http(s) URL (a
// folder, or a .gguf file), local folder or .gguf file (Node), or a folder the user picked / dropped in
// the browser. A GGUF model comes back as a source with `modelFile` set to its (first) file.

import { ModelSourceError } from '../errors.ts';
import type { ModelSource } from '../types.ts';
import { DirectoryHandleSource, FileListSource } from './browser.ts';
import { listHfRepo, parseHfGgufSpec, pickGgufFile } from './gguf-files.ts';
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

const HF_HUB = 'https://huggingface.co';

/**
 * An HF model repo read through https://huggingface.co/{id}/resolve/{revision}/{file}. Which files exist
 * comes from the hub's file list (listHfRepo), asked once on the first exists() instead of a probe per file.
 */
export function huggingFaceSource(repo: string, revision = 'main', opts: ResolveOptions = {}, modelFile?: string): HttpModelSource {
  const endpoint = (opts.hfEndpoint ?? HF_HUB).replace(/\/+$/, '');
  const base = `${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}`;
  const listFiles = async () => (await listHfRepo(endpoint, repo, revision, opts.fetch)).map((f) => f.path);
  const httpOpts: HttpSourceOptions = { label: modelFile ? `${repo}@${revision}/${modelFile}` : `${repo}@${revision}`, listFiles };
  if (opts.fetch) httpOpts.fetch = opts.fetch;
  if (modelFile) httpOpts.modelFile = modelFile;
  return new HttpModelSource(base, httpOpts);
}

/** "Qwen/Qwen3-8B-GGUF:Q4_K_M" → the repo's Q4_K_M file, chosen from the hub's file listing. */
export async function huggingFaceGgufSource(repo: string, revision: string, pick: string, opts: ResolveOptions = {}): Promise<HttpModelSource> {
  const endpoint = opts.hfEndpoint ?? HF_HUB;
  const files = await listHfRepo(endpoint, repo, revision, opts.fetch);
  return huggingFaceSource(repo, revision, opts, pickGgufFile(files.map((f) => f.path), pick, `${repo}@${revision}`));
}

/** A URL of a .gguf file → its folder as the source and the file as modelFile. */
function ggufUrlSource(url: string, opts: ResolveOptions): HttpModelSource {
  const u = new URL(url);
  const slash = u.pathname.lastIndexOf('/');
  const file = decodeURIComponent(u.pathname.slice(slash + 1));
  const base = `${u.origin}${u.pathname.slice(0, slash)}`;
  return new HttpModelSource(base, { label: url, modelFile: file, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
}

const isGgufPath = (s: string) => /\.gguf$/i.test(s.replace(/[?#].*$/, ''));

/** "https://huggingface.co/Qwen/Qwen3-1.7B/resolve/main" (on the hub or opts.hfEndpoint) → its repo and revision. */
function hubResolveUrl(url: string, opts: ResolveOptions): { repo: string; revision: string } | null {
  for (const endpoint of new Set([HF_HUB, ...(opts.hfEndpoint ? [opts.hfEndpoint.replace(/\/+$/, '')] : [])])) {
    if (!url.startsWith(endpoint + '/')) continue;
    const m = /^([A-Za-z0-9][\w.-]*\/[\w.-]+)\/resolve\/([^/]+)\/*$/.exec(url.slice(endpoint.length + 1));
    if (!m) continue;
    try {
      return { repo: m[1]!, revision: decodeURIComponent(m[2]!) };
    } catch {
      return null;
    }
  }
  return null;
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
    let picked: FileListSource | DirectoryHandleSource | undefined;
    if (Array.isArray(spec) || (typeof FileList !== 'undefined' && spec instanceof FileList)) {
      picked = new FileListSource(spec as FileList | readonly File[]);
    } else if ('getDirectoryHandle' in (spec as object)) picked = new DirectoryHandleSource(spec as FileSystemDirectoryHandle);
    else return spec as ModelSource;
    return withGgufFile(picked);
  }
  const s = spec.trim();
  if (/^https?:\/\//i.test(s)) {
    if (isGgufPath(s)) return ggufUrlSource(s, opts);
    const hub = hubResolveUrl(s, opts);
    if (hub) return huggingFaceSource(hub.repo, hub.revision, opts);
    return new HttpModelSource(s, opts.fetch ? { fetch: opts.fetch } : {});
  }
  const base = opts.base ?? (isNode() ? undefined : (globalThis as { location?: { href: string } }).location?.href);
  if (base !== undefined && /^(\/|\.{1,2}\/)/.test(s)) {
    const url = new URL(s, base).href;
    if (isGgufPath(url)) return ggufUrlSource(url, opts);
    return new HttpModelSource(url, opts.fetch ? { fetch: opts.fetch } : {});
  }
  if (isNode()) {
    const { NodeFolderSource, isFolder, localGgufSource } = await nodeFolder();
    const local = await localGgufSource(s);
    if (local) return local;
    if (looksLikePath(s) || (await isFolder(s))) {
      if (!(await isFolder(s))) throw new ModelSourceError(`no such folder: ${s}`, { file: s });
      return new NodeFolderSource(s);
    }
  }
  const gguf = parseHfGgufSpec(s);
  if (gguf) return huggingFaceGgufSource(gguf.repo, gguf.revision, gguf.pick, opts);
  const hf = parseHfId(s);
  if (hf) return huggingFaceSource(hf.repo, hf.revision, opts);
  throw new ModelSourceError(
    `"${s}" is not a model source: use a Hugging Face id (owner/name[@revision], or owner/name:QUANT for a GGUF repo), an http(s) URL, or a local folder or .gguf file`,
    { file: s });
}

/** A picked folder with no config.json but a GGUF model in it: the source with modelFile set. */
async function withGgufFile(src: FileListSource | DirectoryHandleSource): Promise<ModelSource> {
  if (await src.exists('config.json') || await src.exists('mlc-chat-config.json')) return src;
  const files = await src.list();
  if (!files.some((f) => /\.gguf$/i.test(f))) return src;
  src.modelFile = pickGgufFile(files, undefined, src.label);
  return src;
}
