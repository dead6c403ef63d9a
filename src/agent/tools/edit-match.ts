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

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Normalized text plus, for each of its characters, the index of the source character it came from
 * (source(i)). Only non-ASCII characters change, so ASCII text (most code) is returned as it is.
 */
function normalizeWithMap(text: string): { text: string; source: (i: number) => number } {
  if (!NON_ASCII.test(text)) return { text, source: (i) => i };
  const parts: string[] = [];
  const map = new Int32Array(text.length + 1);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c.charCodeAt(0) < 0x80) { parts.push(c); map[n++] = i; continue; }
    if (INVISIBLE.test(c)) continue;
    parts.push(QUOTES[c] ?? (DASHES.test(c) ? '-' : SPACES.test(c) ? ' ' : c));
    map[n++] = i;
  }
  map[n] = text.length;
  return { text: parts.join(''), source: (i) => map[i]! };
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
      const start = nf.source(norm[0]!);
      const end = nf.source(norm[0]! + no.text.length - 1) + 1;
      return { found: { kind: 'normalized', start, end, replacement } };
    }
    if (norm.length > 1) return { many: norm.length, kind: 'normalized' };
  }
  return matchIgnoringIndentation(file, no.text, replacement);
}

/** A line as compared: quotes, dashes and odd spaces normalized, trimmed. ASCII lines (most code) skip the per-character work. */
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

/**
 * The file's lines most like old (same count, at most 8), as "12| text" lines, to show on a miss.
 * "Most like": the highest Dice coefficient over character bigrams between a window of the file's line
 * keys joined by '\n' and old's first lines joined the same way (the first best window wins).
 *
 * Linear in the file's size (a 60,000-line file takes tens of ms, not seconds): the keys are joined
 * once into one text T, where the window of lines [i, i+span) is the substring from the start of line i
 * to the end of line i+span−1, so its bigrams are the pair positions in a range that only moves
 * forward. A sliding multiset count of the bigrams that occur in the target gives each window's
 * intersection with two pointer moves per pair position.
 */
export function closestLines(file: string, old: string): string {
  const fileLines = file.split('\n');
  const oldLines = trimBlankEnds(old.split('\n'));
  const span = Math.max(1, Math.min(8, oldLines.length));
  const best = bestWindow(fileLines.map(lineKey), oldLines.slice(0, span).map(lineKey).join('\n'), span);
  const width = String(best + span).length;
  return fileLines.slice(best, best + span).map((l, j) => `${String(best + j + 1).padStart(width)}| ${l}`).join('\n');
}

/** Index of the first window of `span` keys most like target (Dice over character bigrams: 1 equal, 0 nothing shared). */
function bestWindow(keys: string[], target: string, span: number): number {
  const text = keys.join('\n');
  const starts: number[] = [];  // where each key begins in text
  for (let i = 0, at = 0; i < keys.length; i++) { starts.push(at); at += keys[i]!.length + 1; }
  const endOf = (line: number) => starts[line]! + keys[line]!.length; // exclusive
  // The target's distinct bigrams (k = 0, 1, …) and how often each occurs in it. gramAt(p) is the k of
  // the pair of characters at text[p], text[p+1], or −1 when the target has no such pair. ASCII pairs
  // (nearly all of code) are looked up in a 128×128 table, others in a Map.
  const ascii = new Int32Array(128 * 128).fill(-1);
  const other = new Map<number, number>();
  const wanted: number[] = [];
  for (let i = 0; i + 1 < target.length; i++) {
    const a = target.charCodeAt(i), b = target.charCodeAt(i + 1);
    const isAscii = a < 128 && b < 128;
    let k = isAscii ? ascii[a * 128 + b]! : (other.get(a * 65536 + b) ?? -1);
    if (k < 0) {
      k = wanted.length;
      wanted.push(0);
      if (isAscii) ascii[a * 128 + b] = k; else other.set(a * 65536 + b, k);
    }
    wanted[k]!++;
  }
  const gramAt = (p: number): number => {
    const a = text.charCodeAt(p), b = text.charCodeAt(p + 1);
    return a < 128 && b < 128 ? ascii[a * 128 + b]! : (other.get(a * 65536 + b) ?? -1);
  };
  const have = new Int32Array(wanted.length);
  let common = 0;

  const windows = Math.max(span, keys.length) - span + 1; // a file shorter than span still has one window
  let best = 0;
  let bestScore = -1;
  let lo = 0; // pair positions [lo, hi) are counted
  let hi = 0;
  for (let i = 0; i < windows; i++) {
    const from = starts[i]!;
    const to = endOf(Math.min(keys.length, i + span) - 1); // the window's text is text.slice(from, to)
    for (const upTo = Math.max(to - 1, from); hi < upTo; hi++) { const k = gramAt(hi); if (k >= 0 && have[k]!++ < wanted[k]!) common++; }
    for (; lo < from; lo++) { const k = gramAt(lo); if (k >= 0 && --have[k]! < wanted[k]!) common--; }
    const length = to - from;
    let score: number;
    if (length < 2 || target.length < 2) score = text.slice(from, to) === target ? 1 : 0;
    else score = (2 * common) / (length + target.length - 2); // equal texts give exactly 1
    if (score > bestScore) { best = i; bestScore = score; }
  }
  return best;
}
