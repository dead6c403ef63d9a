// Finding the GGUF file a user means: in a Hugging Face repo ("Qwen/Qwen3-8B-GGUF:Q4_K_M" picks the
// file by its quant name through the hub's file listing), in a local or picked folder, or from a URL.
// A split model is named by its first part ("…-00001-of-00003.gguf"); the loader finds the others.

import { ModelSourceError } from '../errors.ts';
import { parseSplitName } from '../formats/gguf/gguf-read.ts';

export interface RepoFile { path: string; size: number }

/** "owner/name[@revision]:QUANT" or "owner/name[@revision]:path/file.gguf". */
const HF_GGUF = /^([A-Za-z0-9][\w.-]*\/[\w.-]+)(?:@([\w./-]+?))?:([\w.\-/]+)$/;

export function parseHfGgufSpec(spec: string): { repo: string; revision: string; pick: string } | null {
  const m = HF_GGUF.exec(spec.trim());
  return m ? { repo: m[1]!, revision: m[2] ?? 'main', pick: m[3]! } : null;
}

const isGguf = (p: string) => /\.gguf$/i.test(p);

/** Does this path name the quant (as a whole token: "Q4_K_M" matches "x-Q4_K_M.gguf", not "x-Q4_K_M_XL")? */
function namesQuant(path: string, quant: string): boolean {
  const q = quant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[-_./])${q}([-.]|$)`, 'i').test(path);
}

/**
 * The GGUF file `pick` names among `paths`: an exact path, or a quant name (Q4_K_M, Q8_0, ...). Only
 * whole models count: the single file, or part 1 of a split. Several matches: the shortest path.
 * `pick` undefined: the folder must hold exactly one GGUF model.
 */
export function pickGgufFile(paths: readonly string[], pick: string | undefined, where: string): string {
  const models = paths.filter(isGguf).filter((p) => {
    const s = parseSplitName(p.split('/').pop()!);
    return !s || s.no === 1;
  }).filter((p) => !/(^|\/)mmproj[^/]*$/i.test(p));      // vision projectors are not language models
  if (pick !== undefined) {
    if (paths.includes(pick)) return pick;
    const byQuant = models.filter((p) => namesQuant(p, pick)).sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
    if (byQuant.length > 0) return byQuant[0]!;
    throw new ModelSourceError(`no GGUF file for "${pick}" in ${where} (it has ${models.length ? models.join(', ') : 'no .gguf files'})`, { file: where });
  }
  if (models.length === 1) return models[0]!;
  if (models.length === 0) throw new ModelSourceError(`no .gguf file in ${where}`, { file: where });
  throw new ModelSourceError(`${where} holds ${models.length} GGUF models (${models.join(', ')}): name one, e.g. "${where}:Q4_K_M"`, { file: where });
}

const MAX_PAGES = 20;

/** Every file of a Hugging Face repo at a revision, from the hub API (paged by its Link header). */
export async function listHfRepo(endpoint: string, repo: string, revision: string, fetchImpl: typeof fetch = globalThis.fetch): Promise<RepoFile[]> {
  let url: string | null = `${endpoint.replace(/\/+$/, '')}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
  const out: RepoFile[] = [];
  for (let page = 0; url && page < MAX_PAGES; page++) {
    let res: Response;
    try {
      res = await fetchImpl(url);
    } catch (e) {
      throw new ModelSourceError(`listing ${repo} failed: ${(e as Error).message}`, { file: repo, url, cause: e });
    }
    if (!res.ok) {
      void res.body?.cancel().catch(() => undefined);
      const what = res.status === 404 ? 'not found (is the repo id right?)' : res.status === 401 || res.status === 403 ? 'access denied (gated or private?)' : 'listing failed';
      throw new ModelSourceError(`${repo}: ${what}: HTTP ${res.status}`, { file: repo, url, status: res.status });
    }
    const body: unknown = await res.json().catch(() => null);
    if (!Array.isArray(body)) throw new ModelSourceError(`${repo}: the hub's file list is not a JSON array`, { file: repo, url });
    for (const e of body as { type?: string; path?: unknown; size?: unknown; lfs?: { size?: unknown } }[]) {
      if (e?.type !== 'file' || typeof e.path !== 'string') continue;
      const size = typeof e.lfs?.size === 'number' ? e.lfs.size : typeof e.size === 'number' ? e.size : 0;
      out.push({ path: e.path, size });
    }
    const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '');
    url = next ? new URL(next[1]!, url).href : null;
  }
  return out;
}
