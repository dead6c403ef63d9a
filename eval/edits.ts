// Follow-up tasks' edits: applying them to the given project (each oldText must occur exactly once in
// its file at that point, as edit_file demands of a careful agent), checking that they give exactly the
// task's solution, and the edits that give a broken variant's files instead.
import { brokenFiles, type BrokenSolution, type EvalTask, type FileEdit } from './task.ts';

/** A follow-up task whose edits do not apply to its given files, or do not give its solution. */
export class EditsMismatch extends Error {
  override name = 'EditsMismatch';
}

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at >= 0 && n < 2; at = text.indexOf(needle, at + 1)) n++;
  return n;
}

/** `files` with `edits` applied in order (a new object); throws EditsMismatch when an oldText is not found exactly once. */
export function applyEdits(files: Readonly<Record<string, string>>, edits: readonly FileEdit[], label: string): Record<string, string> {
  const out = { ...files };
  edits.forEach((edit, i) => {
    const text = out[edit.file];
    if (text === undefined) throw new EditsMismatch(`${label}: edit ${i + 1} changes ${edit.file}, which is not in the project`);
    if (edit.oldText === '') throw new EditsMismatch(`${label}: edit ${i + 1} of ${edit.file} has an empty oldText`);
    const n = occurrences(text, edit.oldText);
    if (n !== 1) throw new EditsMismatch(`${label}: edit ${i + 1}'s oldText occurs ${n === 0 ? 'nowhere' : 'more than once'} in ${edit.file}: ${JSON.stringify(edit.oldText.slice(0, 60))}`);
    const at = text.indexOf(edit.oldText);
    out[edit.file] = text.slice(0, at) + edit.newText + text.slice(at + edit.oldText.length);
  });
  return out;
}

function sameFiles(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): string | null {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const name of names) {
    if (a[name] !== b[name]) return name;
  }
  return null;
}

/** A follow-up task's given files and edits; throws EditsMismatch unless the edits turn given into exactly solution. */
export function followUpEdits(task: EvalTask): { given: Record<string, string>; edits: readonly FileEdit[] } {
  const { given, edits } = task;
  if (!given || !edits) throw new EditsMismatch(`eval task ${task.id} is not a follow-up: it needs both given files and edits`);
  if (edits.length === 0) throw new EditsMismatch(`eval task ${task.id}: a follow-up needs at least one edit`);
  const differs = sameFiles(applyEdits(given, edits, `eval task ${task.id}`), task.solution);
  if (differs !== null) throw new EditsMismatch(`eval task ${task.id}: its edits applied to the given files do not give the solution's ${differs}`);
  return { given, edits };
}

/**
 * The edits that give a broken variant's files: the broken change made inside the first edit whose
 * newText holds `from` and, so changed, still gives exactly brokenFiles(task, broken). null when no edit
 * does (the change is outside what the edits write): then the broken file is written whole.
 */
export function brokenEdits(task: EvalTask, broken: BrokenSolution): FileEdit[] | null {
  const { given, edits } = followUpEdits(task);
  const wanted = brokenFiles(task, broken);
  for (let i = 0; i < edits.length; i++) {
    const edit = edits[i]!;
    if (edit.file !== broken.file || !edit.newText.includes(broken.from)) continue;
    const changed = edits.map((e, j) => (j === i ? { ...e, newText: e.newText.replace(broken.from, broken.to) } : e));
    try {
      if (sameFiles(applyEdits(given, changed, `eval task ${task.id}`), wanted) === null) return changed;
    } catch (e) {
      if (!(e instanceof EditsMismatch)) throw e;
    }
  }
  return null;
}
