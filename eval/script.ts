// A scripted model for an eval task, in the call format of the model's chat template:
// - repliesWriting: the replies a correct agent gives to write `files` from nothing — each file with
//   write_file (longer ones in parts of 80 lines with append: true, as the system prompt asks), then
//   serve, then a short answer;
// - repliesEditing: the replies a careful agent gives to a follow-up request — read_file of each file it
//   will change (once, before its first edit), one edit_file per edit, then serve, then a short answer.
import type { ToolFormat } from '../src/model/tool-format.ts';
import { brokenEdits, followUpEdits } from './edits.ts';
import { brokenFiles, type BrokenSolution, type EvalTask } from './task.ts';

const PART_LINES = 80;

export function callText(format: ToolFormat, name: string, args: Record<string, unknown>): string {
  if (format === 'json') return `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
  const params = Object.entries(args).map(([k, v]) => `<parameter=${k}>\n${String(v)}\n</parameter>\n`).join('');
  return `<tool_call>\n<function=${name}>\n${params}</function>\n</tool_call>`;
}

/** write_file calls for one file: in parts of PART_LINES lines, every part after the first appended. */
function writeCalls(path: string, content: string, format: ToolFormat): string[] {
  const calls: string[] = [];
  const lines = content.split(/(?<=\n)/);
  for (let at = 0; at < lines.length; at += PART_LINES) {
    const part = lines.slice(at, at + PART_LINES).join('');
    const args: Record<string, unknown> = { path, content: part };
    if (at > 0) args.append = true;
    calls.push(callText(format, 'write_file', args));
  }
  return calls;
}

export function repliesWriting(files: Record<string, string>, format: ToolFormat): string[] {
  const replies = Object.entries(files).flatMap(([path, content]) => writeCalls(path, content, format));
  replies.push(callText(format, 'serve', {}));
  replies.push('Done: the app is written and served.');
  return replies;
}

/**
 * A follow-up task's scripted answer on its given files: the right one, or with `broken` the edits that
 * give that broken variant's files (the broken change made in the edit that writes it; when no edit
 * writes it, the broken file is read and written whole). Throws EditsMismatch when the task's edits do
 * not turn its given files into exactly its solution.
 */
export function repliesEditing(task: EvalTask, format: ToolFormat, broken?: BrokenSolution): string[] {
  let { edits } = followUpEdits(task);
  let rewrite: { path: string; content: string } | null = null;
  if (broken) {
    const changed = brokenEdits(task, broken);
    if (changed) {
      edits = changed;
    } else {
      edits = edits.filter((e) => e.file !== broken.file);
      rewrite = { path: broken.file, content: brokenFiles(task, broken)[broken.file]! };
    }
  }
  const replies: string[] = [];
  const read = new Set<string>();
  const readOnce = (path: string) => {
    if (read.has(path) || task.given?.[path] === undefined) return;
    read.add(path);
    replies.push(callText(format, 'read_file', { path }));
  };
  for (const edit of edits) {
    readOnce(edit.file);
    replies.push(callText(format, 'edit_file', { path: edit.file, old: edit.oldText, new: edit.newText }));
  }
  if (rewrite) {
    readOnce(rewrite.path);
    replies.push(...writeCalls(rewrite.path, rewrite.content, format));
  }
  replies.push(callText(format, 'serve', {}));
  replies.push('Done: the change is made and the app is served.');
  return replies;
}

/** The scripted model's replies for one run: a follow-up task's edits, else the files written from nothing. */
export function scriptedReplies(run: { task?: EvalTask; broken?: BrokenSolution; files?: Record<string, string> }, format: ToolFormat): string[] {
  if (run.task?.edits) return repliesEditing(run.task, format, run.broken);
  return repliesWriting(run.files ?? {}, format);
}
