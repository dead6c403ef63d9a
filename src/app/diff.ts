// Line diffs for the approval cards: what a write_file / edit_file would change, before it runs.
// Longest-common-subsequence over lines (O(n·m), capped), with unchanged runs folded to 3 lines of context.
import type { FileChange } from '../agent/tool-types.ts';

export type DiffLine = { op: 'same' | 'add' | 'del'; text: string } | { op: 'skip'; count: number };

const MAX_CELLS = 4_000_000;    // 2,000 × 2,000 lines; beyond that, show all old lines removed, all new added
const CONTEXT = 3;

function lines(text: string): string[] {
  if (text === '') return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

export function diffLines(before: string, after: string): DiffLine[] {
  const a = lines(before);
  const b = lines(after);
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ op: 'del' as const, text })), ...b.map((text) => ({ op: 'add' as const, text }))];
  // lcs[i][j] = LCS length of a[i..], b[j..]; one flat Uint32Array of (n+1)(m+1).
  const n = a.length, m = b.length, w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push({ op: 'same', text: a[i]! }); i++; j++; }
    else if (i < n && (j === m || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) { out.push({ op: 'del', text: a[i]! }); i++; }
    else { out.push({ op: 'add', text: b[j]! }); j++; }
  }
  return foldContext(out);
}

/** Runs of unchanged lines longer than 2×CONTEXT keep CONTEXT lines each side of a change. */
function foldContext(diff: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let k = 0;
  while (k < diff.length) {
    if (diff[k]!.op !== 'same') { out.push(diff[k]!); k++; continue; }
    let end = k;
    while (end < diff.length && diff[end]!.op === 'same') end++;
    const run = diff.slice(k, end);
    const keepBefore = k === 0 ? 0 : CONTEXT;
    const keepAfter = end === diff.length ? 0 : CONTEXT;
    if (run.length > keepBefore + keepAfter + 1) {
      out.push(...run.slice(0, keepBefore), { op: 'skip', count: run.length - keepBefore - keepAfter }, ...run.slice(run.length - keepAfter));
    } else out.push(...run);
    k = end;
  }
  return out;
}

export interface ProposedEdit {
  path: string;
  before: string;              // the file now ('' when new)
  after: string;               // the file if the call runs
  isNew: boolean;
  note?: string;               // e.g. "old text not found as written: the tool will try a looser match"
}

/** The diff card for a change the tool itself planned (exactly what it will write). */
export function editFromChange(change: FileChange): ProposedEdit {
  return { path: change.path, before: change.before ?? '', after: change.after, isNew: change.before === null };
}

/**
 * A guess at what a file-changing call would do to `current` (null = no such file), for a tool that
 * cannot plan its change (ours all can: see editFromChange). edit_file's real matching is
 * more forgiving (quotes, indentation); when the exact text is not found the diff shows old → new alone.
 */
export function proposedEdit(name: string, args: Record<string, unknown>, current: string | null): ProposedEdit {
  const path = String(args.path ?? args.file ?? args.filename ?? args.file_path ?? '');
  const before = current ?? '';
  if (name === 'write_file') {
    const content = String(args.content ?? args.contents ?? args.text ?? args.code ?? '');
    const append = args.append === true || args.append === 'true';
    return { path, before, after: append ? before + content : content, isNew: current === null };
  }
  const oldText = String(args.old ?? args.old_string ?? args.old_str ?? '');
  const newText = String(args.new ?? args.new_string ?? args.new_str ?? '');
  const at = oldText === '' ? -1 : before.indexOf(oldText);
  if (at < 0) return { path, before: oldText, after: newText, isNew: false, note: 'the old text is not in the file exactly as written: the tool will try a looser match' };
  return { path, before, after: before.slice(0, at) + newText + before.slice(at + oldText.length), isNew: false };
}
