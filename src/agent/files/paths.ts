// Project paths: every path a tool or the UI hands to a ProjectFiles store goes through here first.
// Canonical form: '/'-separated, no leading './', no '.' or empty segments, no trailing '/'; '' = root.

/** A path that is not allowed in a project (it would leave the root, or cannot be stored). */
export class ProjectPathError extends Error {
  override name = 'ProjectPathError';
  constructor(readonly path: string, reason: string) {
    super(`path ${shown(path)} ${reason}`);
  }
}

/** A path in quotes as a message shows it: bidirectional controls written as \u escapes, so the message reads as it is. */
const shown = (path: string): string => JSON.stringify(path).replace(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A file or folder that the operation needs is missing, or is the wrong kind. */
export class ProjectFileError extends Error {
  override name = 'ProjectFileError';
  constructor(readonly path: string, reason: string) {
    super(`${path === '' ? 'the project root' : JSON.stringify(path)} ${reason}`);
  }
}

/**
 * Characters that reorder how text is shown (embeddings, overrides, isolates, marks): "evil\u202Etxt.js"
 * shows as "evilsj.txt". A file name may hold none of them.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;

/**
 * Validates and canonicalizes a project-relative path. Refuses (ProjectPathError): NUL bytes,
 * backslashes, bidirectional control characters, absolute paths ('/x', 'C:x', '~/x'), and any '..' segment — no path may leave the root.
 * "./src//a.js" -> "src/a.js"; "." and "" -> "" (the root).
 */
export function normalizeProjectPath(input: string): string {
  if (typeof input !== 'string') throw new ProjectPathError(String(input), 'is not a string');
  if (input.includes('\0')) throw new ProjectPathError(input, 'contains a NUL byte');
  if (input.includes('\\')) throw new ProjectPathError(input, "contains a backslash: use '/' between folders");
  const bidi = BIDI_CONTROL.exec(input);
  if (bidi) {
    const code = `U+${bidi[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw new ProjectPathError(input, `contains an invisible bidirectional control character (${code}), which makes a name read differently from what it is: use a plain name`);
  }
  const trimmed = input.trim();
  if (trimmed.startsWith('/')) throw new ProjectPathError(input, 'is absolute: give a path inside the project, like "index.html"');
  if (/^[A-Za-z]:/.test(trimmed)) throw new ProjectPathError(input, 'is absolute (a drive letter): give a path inside the project');
  if (trimmed.startsWith('~')) throw new ProjectPathError(input, 'points into a home folder: give a path inside the project');
  const parts: string[] = [];
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') throw new ProjectPathError(input, "leaves the project root ('..' is not allowed)");
    parts.push(segment);
  }
  return parts.join('/');
}

/** Like normalizeProjectPath, but the root itself is refused (a file needs a name). */
export function normalizeFilePath(input: string): string {
  const path = normalizeProjectPath(input);
  if (path === '') throw new ProjectPathError(input, 'names the project root, not a file');
  return path;
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
