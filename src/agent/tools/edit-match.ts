// edit_file's guard: find `old` in a file exactly, then with smart quotes / dashes / odd spaces
// normalized, then ignoring indentation; when nothing matches, find the closest lines to show.
import { ZERO_WIDTH_SPACE } from './clip.ts';

export type MatchKind = 'exact' | 'normalized' | 'indentation';

/** A unique match: the byte range [start, end) of the file to replace, and the text to put there. */
export interface EditMatch { kind: MatchKind; start: number; end: number; replacement: string }
export type MatchResult =
  | { found: EditMatch }
  | { many: number; kind: MatchKind }
  | { none: true };

const QUOTES: Record<string, string> = { '\u2018': "'", '\u2019': "'", '\u201a': "'", '\u201b': "'", '\u2032': "'", '\u201c': '"', '\u201d': '"', '\u201e': '"', '\u201f': '"', '\u2033': '"', '\u00ab': '"', '\u00bb': '"' };
const DASHES = /[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/;
const SPACES = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\t]/;
const INVISIBLE = /[\u200b\u200c\u200d\u2060\ufeff]/;

/** Normalized text plus, for each of its characters, the index of the source character it came from. */
function normalizeWithMap(text: string): { text: string; map: number[] } {
  let out = '';
  const map: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (INVISIBLE.test(c)) continue;
    const n = QUOTES[c] ?? (DASHES.test(c) ? '-' : SPACES.test(c) && c !== '\t' ? ' ' : c);
    out += n;
    map.push(i);
  }
  map.push(text.length);
  return { text: out, map };
}

function occurrences(haystack: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) at.push(i);
  return at;
}

/** "12| code" lines copied from read_file output: the text without the numbers, or null if not all numbered. */
export function withoutLineNumbers(text: string): string | null {
  const lines = text.split('\n');
  const numbered = /^\s*\d+\| ?/;
  if (!lines.some((l) => l.trim() !== '') || !lines.every((l) => l.trim() === '' || numbered.test(l))) return null;
  return lines.map((l) => l.replace(numbered, '')).join('\n');
}

export function findEdit(file: string, old: string, replacement: string): MatchResult {
  const first = findEditAsGiven(file, old, replacement);
  if (!('none' in first)) return first;
  // Last: old (and new) copied with read_file's line numbers.
  const bare = withoutLineNumbers(old);
  if (bare === null) return first;
  return findEditAsGiven(file, bare, withoutLineNumbers(replacement) ?? replacement);
}

function findEditAsGiven(file: string, old: string, replacement: string): MatchResult {
  const exact = occurrences(file, old);
  if (exact.length === 1) return { found: { kind: 'exact', start: exact[0]!, end: exact[0]! + old.length, replacement } };
  if (exact.length > 1) return { many: exact.length, kind: 'exact' };

  const nf = normalizeWithMap(file);
  const no = normalizeWithMap(old.split(`<${ZERO_WIDTH_SPACE}`).join('<'));
  if (no.text.length > 0) {
    const norm = occurrences(nf.text, no.text);
    if (norm.length === 1) {
      const start = nf.map[norm[0]!]!;
      const end = nf.map[norm[0]! + no.text.length - 1]! + 1;
      return { found: { kind: 'normalized', start, end, replacement } };
    }
    if (norm.length > 1) return { many: norm.length, kind: 'normalized' };
  }
  return matchIgnoringIndentation(file, no.text, replacement);
}

const lineKey = (line: string) => normalizeWithMap(line).text.trim();
const indentOf = (line: string) => /^[ \t]*/.exec(line)![0];

function matchIgnoringIndentation(file: string, old: string, replacement: string): MatchResult {
  const oldLines = trimBlankEnds(old.split('\n'));
  if (oldLines.length === 0) return { none: true };
  const keys = oldLines.map(lineKey);
  const fileLines = file.split('\n');
  const fileKeys = fileLines.map(lineKey);
  const starts: number[] = [];
  for (let i = 0; i + keys.length <= fileLines.length; i++) {
    if (keys.every((k, j) => fileKeys[i + j] === k)) starts.push(i);
  }
  if (starts.length > 1) return { many: starts.length, kind: 'indentation' };
  if (starts.length === 0) return { none: true };
  const first = starts[0]!;
  const start = fileLines.slice(0, first).reduce((n, l) => n + l.length + 1, 0);
  const end = start + fileLines.slice(first, first + keys.length).join('\n').length;
  return { found: { kind: 'indentation', start, end, replacement: reindent(replacement, indentOf(oldLines[0]!), indentOf(fileLines[first]!)) } };
}

function trimBlankEnds(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a]!.trim() === '') a++;
  while (b > a && lines[b - 1]!.trim() === '') b--;
  return lines.slice(a, b);
}

/** Moves new text from the indentation the model used to the one the file has. */
function reindent(text: string, from: string, to: string): string {
  const lines = trimBlankEnds(text.split('\n'));
  return lines.map((line) => {
    if (line.trim() === '') return '';
    if (line.startsWith(from)) return to + line.slice(from.length);
    return to + line.trimStart();
  }).join('\n');
}

/** The file's lines most like old (same count, at most 8), as "12| text" lines, to show on a miss. */
export function closestLines(file: string, old: string): string {
  const fileLines = file.split('\n');
  const oldLines = trimBlankEnds(old.split('\n'));
  const span = Math.max(1, Math.min(8, oldLines.length));
  const target = oldLines.slice(0, span).map(lineKey).join('\n');
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i + span <= Math.max(span, fileLines.length); i++) {
    const score = similarity(fileLines.slice(i, i + span).map(lineKey).join('\n'), target);
    if (score > bestScore) { best = i; bestScore = score; }
  }
  const width = String(best + span).length;
  return fileLines.slice(best, best + span).map((l, j) => `${String(best + j + 1).padStart(width)}| ${l}`).join('\n');
}

/** Dice coefficient over character bigrams: 1 for equal texts, 0 for nothing in common. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) grams.set(a.slice(i, i + 2), (grams.get(a.slice(i, i + 2)) ?? 0) + 1);
  let common = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const n = grams.get(g) ?? 0;
    if (n > 0) { common++; grams.set(g, n - 1); }
  }
  return (2 * common) / (a.length + b.length - 2);
}
