// Everything a served page needs, read from the project's CURRENT files when serve runs: each file of the
// folder (text or base64), with JS/TS module specifiers and CSS url()s rewritten to the port's virtual
// URLs (http://pooled-preview.invalid:P/path). The frame runtime turns those into blob: URLs it owns.
import type { ProjectFiles } from '../agent/files/types.ts';
import { cssReferences, rewriteCssUrls } from './css-urls.ts';
import { rewriteSpecifiers } from './js-imports.ts';
import { extensionOf, isScript, isTextType, mimeType, needsTranspile } from './mime.ts';
import type { FrameStorage } from './storage.ts';
import { PREVIEW_LIMITS, PreviewError } from './types.ts';
import { isUrlLikeSpecifier, resolveReference, virtualOrigin, virtualUrl } from './urls.ts';

/** esbuild (or any transpiler) for .ts/.tsx/.jsx: JS out, or an error that names file:line:col. */
export type Transpile = (code: string, path: string) => Promise<{ code: string } | { error: string }>;

export interface ManifestRef {
  /** as written */
  ref: string;
  /** folder-relative path it resolved to */
  path: string;
  found: boolean;
}

export interface ManifestFile {
  mime: string;
  text?: string;
  base64?: string;
  /** modules this script imports statically (url-like specifiers only) */
  imports?: ManifestRef[];
  /** url()/@import of a stylesheet */
  refs?: ManifestRef[];
  /** a transpile error: the module throws it when loaded */
  error?: string;
}

export interface FrameManifest {
  port: number;
  origin: string;
  /** folder-relative path of the page to open */
  page: string;
  /** keyed by folder-relative path */
  files: Record<string, ManifestFile>;
  /** virtual URLs that scripts import but that do not exist (the runtime maps them to a dead URL) */
  missing: string[];
  /** the port's localStorage and sessionStorage as the host keeps them (storage.ts); added by the host */
  storage?: FrameStorage;
}

export interface BuildManifestOptions {
  files: ProjectFiles;
  folder: string;
  page: string;
  port: number;
  transpile?: Transpile;
}

const SCRIPT_CANDIDATES = ['', '.ts', '.tsx', '.js', '.jsx', '.mjs', '/index.ts', '/index.tsx', '/index.js'];

/** A module path as a browser + bundler would find it: exact, then TS/JS extensions, then folder index. */
export function findScript(path: string, exists: (p: string) => boolean): string | null {
  const stem = path.replace(/\.(js|jsx|mjs)$/, '');
  for (const suffix of SCRIPT_CANDIDATES) if (exists(path + suffix)) return path + suffix;
  if (stem !== path) for (const ext of ['.ts', '.tsx', '.jsx']) if (exists(stem + ext)) return stem + ext;
  return null;
}

export async function buildManifest(opts: BuildManifestOptions): Promise<FrameManifest> {
  const { files, folder, port } = opts;
  const prefix = folder === '' ? '' : folder + '/';
  const all = (await files.allFiles()).filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
  const present = new Set(all);
  const exists = (p: string) => present.has(p);
  const out: Record<string, ManifestFile> = {};
  const missing = new Set<string>();
  let bytes = 0;

  for (const path of all) {
    const mime = mimeType(path);
    const raw = await files.readBytes(prefix + path);
    if (raw === null) continue; // removed while we read
    bytes += raw.byteLength;
    if (bytes > PREVIEW_LIMITS.maxServedBytes) {
      throw new PreviewError(`the folder "${folder || '/'}" holds over ${PREVIEW_LIMITS.maxServedBytes >> 20} MiB: serve a smaller folder`);
    }
    if (!isTextType(mime)) {
      out[path] = { mime, base64: toBase64(raw) };
      continue;
    }
    let text = new TextDecoder().decode(raw);
    const entry: ManifestFile = { mime };
    if (isScript(path)) {
      if (needsTranspile(path)) {
        const result = opts.transpile
          ? await opts.transpile(text, prefix + path)
          : { error: `${prefix + path}: TypeScript/JSX needs the bundler, which is not available here` };
        if ('error' in result) {
          entry.error = result.error;
          text = `throw new SyntaxError(${JSON.stringify(result.error)});`;
        } else text = result.code;
      }
      const imports: ManifestRef[] = [];
      text = rewriteSpecifiers(text, (spec, kind) => {
        if (!isUrlLikeSpecifier(spec)) return null;
        const target = resolveReference(spec, path, port);
        if (target === null) return null;
        const found = findScript(target, exists);
        const url = virtualUrl(port, found ?? target);
        if (!found) missing.add(url);
        if (kind === 'static') imports.push({ ref: spec, path: found ?? target, found: found !== null });
        return url;
      });
      entry.imports = imports;
    } else if (extensionOf(path) === 'css') {
      entry.refs = cssReferences(text).flatMap((ref) => {
        const target = resolveReference(ref, path, port);
        return target === null ? [] : [{ ref, path: target, found: exists(target) }];
      });
      text = rewriteCssUrls(text, (ref) => {
        const target = resolveReference(ref, path, port);
        return target === null ? null : virtualUrl(port, target);
      });
    }
    entry.text = text;
    out[path] = entry;
  }
  return { port, origin: virtualOrigin(port), page: opts.page, files: out, missing: [...missing] };
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
