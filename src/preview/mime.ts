// Content types for served files, by extension. Unknown files are served as bytes.
const TYPES: Record<string, string> = {
  html: 'text/html', htm: 'text/html', css: 'text/css', js: 'text/javascript', mjs: 'text/javascript',
  cjs: 'text/javascript', ts: 'text/javascript', tsx: 'text/javascript', jsx: 'text/javascript', mts: 'text/javascript',
  json: 'application/json', map: 'application/json', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv',
  xml: 'application/xml', svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg',
  gif: 'image/gif', webp: 'image/webp', avif: 'image/avif', ico: 'image/x-icon', bmp: 'image/bmp',
  mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', mp4: 'video/mp4', webm: 'video/webm',
  woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf', wasm: 'application/wasm',
  glsl: 'text/plain', wgsl: 'text/plain',
};

export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

export function mimeType(path: string): string {
  return TYPES[extensionOf(path)] ?? 'application/octet-stream';
}

/** Files whose text we read and may rewrite (JS modules, CSS) or hand over as text. */
export function isTextType(mime: string): boolean {
  return mime.startsWith('text/') || mime === 'application/json' || mime === 'image/svg+xml' || mime === 'application/xml';
}

/** Sources that go through esbuild before the browser sees them. */
export function needsTranspile(path: string): boolean {
  return ['ts', 'tsx', 'jsx', 'mts'].includes(extensionOf(path));
}

export function isScript(path: string): boolean {
  return ['js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'mts'].includes(extensionOf(path));
}
