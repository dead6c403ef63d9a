// The virtual address space of a served folder. A page on port P lives at http://pooled-preview.invalid:P/
// (".invalid" can never resolve, so nothing we do not serve ever reaches a real server); URL paths map
// to files under the served folder. The UI shows it as ":P/".

export const VIRTUAL_HOST = 'pooled-preview.invalid';

export function virtualOrigin(port: number): string {
  return `http://${VIRTUAL_HOST}:${port}`;
}

/** The URL of a file inside the served folder: ('img/a b.png', 5173) -> http://pooled-preview.invalid:5173/img/a%20b.png */
export function virtualUrl(port: number, pathInFolder: string): string {
  return new URL('/' + pathInFolder.split('/').map(encodeURIComponent).join('/'), virtualOrigin(port)).href;
}

/**
 * Resolves a reference (as written in HTML/CSS/JS) made from a file of the served folder.
 * Returns the folder-relative path it names, or null when it points elsewhere (https://…, data:, a bare
 * module name such as "react", an in-page "#anchor").
 */
export function resolveReference(ref: string, fromPath: string, port: number): string | null {
  const trimmed = ref.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return null;
  let url: URL;
  try {
    url = new URL(trimmed, virtualUrl(port, fromPath));
  } catch {
    return null;
  }
  if (url.origin !== virtualOrigin(port)) return null;
  return pathOfVirtualUrl(url);
}

/** http://pooled-preview.invalid:5173/img/a%20b.png?v=1 -> 'img/a b.png'; '/'-ending -> '…/index.html'. */
export function pathOfVirtualUrl(url: URL): string {
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    path = url.pathname;
  }
  path = path.replace(/^\/+/, '');
  if (path === '' || path.endsWith('/')) path += 'index.html';
  return path;
}

/** Is this a module specifier a browser resolves as a URL (not a bare name)? */
export function isUrlLikeSpecifier(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/') || /^[a-z][a-z0-9+.-]*:/i.test(spec);
}
