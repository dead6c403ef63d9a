// Shared checks for every ModelSource implementation.

import { TruncatedFileError } from '../errors.ts';

/** Throws a RangeError for an impossible request (a caller bug, not a bad file). */
export function checkRangeArgs(label: string, path: string, start: number, end: number): void {
  if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && 0 <= start && start <= end)) {
    throw new RangeError(`${label}/${path}: bad byte range [${start}, ${end})`);
  }
}

/** The bytes [start, end) of a file known to be `size` bytes long, or a TruncatedFileError naming it. */
export function requireWithin(path: string, size: number, start: number, end: number): void {
  if (end > size) {
    throw new TruncatedFileError(`needs bytes [${start}, ${end}) but the file is only ${size} bytes long`, { file: path, fileSize: size });
  }
}

/** Normalise "a//b/./c" → "a/b/c" and refuse paths that climb out of the model root. */
export function normalisePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') throw new RangeError(`model file path "${path}" leaves the model folder`);
    parts.push(part);
  }
  return parts.join('/');
}
