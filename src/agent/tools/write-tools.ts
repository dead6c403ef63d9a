// The file-changing tools: write_file and edit_file, with their guards (docs/agent.md, Repairs and guards).
// Each is planned first (planWrite / planEdit: what the file would become, or why nothing will be
// written) and applied second, so an "ask first" approval shows exactly what the tool will do and a
// call the guards refuse is refused without asking.
import type { ProjectFiles } from '../files/types.ts';
import type { FileChange, ToolOutcome, ToolPlan } from '../tool-types.ts';
import { normalizeFilePath } from '../files/paths.ts';
import { optionalBool, plural, stringArg } from './args.ts';
import { restoreControlTokens } from './clip.ts';
import { closestLines, findEdit } from './edit-match.ts';

const UNCHANGED_NOTE = 'Serve it to check it, fix something else, or finish.';
const countLines = (text: string) => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
const isWholePage = (html: string) => /<!doctype\s+html|<html[\s>]/i.test(html);

/** An append whose start repeats the file's start: the model re-sent the whole file. */
export function startsLikeFile(existing: string, appended: string): boolean {
  const a = existing.trimStart();
  const b = appended.trimStart();
  if (a.length === 0) return false;
  const probe = Math.min(a.length, 120);
  return probe >= Math.min(16, a.length) && b.startsWith(a.slice(0, probe));
}

/** A plan that writes: applying it writes `after` and reports `outcome`. */
function change(files: ProjectFiles, path: string, before: string | null, after: string, outcome: ToolOutcome): ToolPlan {
  const fileChange: FileChange = { path, before, after };
  return {
    kind: 'change', change: fileChange,
    apply: async () => {
      await files.write(path, after);
      return outcome;
    },
  };
}

const final = (outcome: ToolOutcome): ToolPlan => ({ kind: 'final', outcome });
const unchanged = (text: string): ToolPlan => final({ ok: true, changed: false, text: `${text} ${UNCHANGED_NOTE}` });

export async function planWrite(files: ProjectFiles, args: Record<string, unknown>): Promise<ToolPlan> {
  const path = normalizeFilePath(stringArg(args, 'path', 'write_file'));
  const content = restoreControlTokens(stringArg(args, 'content', 'write_file'));
  const append = optionalBool(args, 'append', 'write_file');
  const existing = await files.readText(path);

  if (append && existing !== null && existing !== '') {
    if (startsLikeFile(existing, content)) {
      if (content === existing) return unchanged(`${path} is unchanged: it already has exactly this content.`);
      return change(files, path, existing, content, {
        ok: true, changed: true,
        text: `wrote ${path} (${plural(countLines(content), 'line')}): this append started like the file itself, so it replaced the file instead of doubling it`,
      });
    }
    const joined = existing.endsWith('\n') || content.startsWith('\n') ? existing + content : existing + '\n' + content;
    return change(files, path, existing, joined, { ok: true, changed: true, text: `appended ${plural(countLines(content), 'line')} to ${path} (now ${plural(countLines(joined), 'line')})` });
  }
  if (existing === content) return unchanged(`${path} is unchanged: it already has exactly this content.`);
  if (!append && existing !== null && /\.html?$/i.test(path) && isWholePage(existing) && !isWholePage(content)) {
    return final({
      ok: false,
      error: `refused: ${path} is a whole HTML page and this content is only a fragment of one (no <!doctype> or <html>). ` +
        'Use edit_file to change part of it, or write the whole page.',
    });
  }
  const verb = existing === null ? 'created' : 'wrote';
  return change(files, path, existing, content, { ok: true, changed: true, text: `${verb} ${path} (${plural(countLines(content), 'line')})` });
}

export async function planEdit(files: ProjectFiles, args: Record<string, unknown>): Promise<ToolPlan> {
  const path = normalizeFilePath(stringArg(args, 'path', 'edit_file'));
  const old = stringArg(args, 'old', 'edit_file');
  const replacement = restoreControlTokens(stringArg(args, 'new', 'edit_file'));
  const text = await files.readText(path);
  if (text === null) return final({ ok: false, error: `no such file: ${path} (create it with write_file)` });
  if (old === '') return final({ ok: false, error: 'old is empty: copy the exact lines to replace from the file' });
  if (old === replacement) return unchanged(`${path} is unchanged: old and new are the same.`);

  const match = findEdit(text, old, replacement);
  if ('none' in match) {
    return final({ ok: false, error: `old was not found in ${path}. The closest lines are:\n${closestLines(text, old)}` });
  }
  if ('many' in match) {
    return final({ ok: false, error: `old matches ${match.many} places in ${path}: include more of the surrounding lines so it matches once` });
  }
  const { start, end, replacement: inserted, kind } = match.found;
  const updated = text.slice(0, start) + inserted + text.slice(end);
  if (updated === text) return unchanged(`${path} is unchanged: it already has that text.`);
  const firstLine = text.slice(0, start).split('\n').length;
  // Whole lines ending in their newline count once each (old = "line 8\n" is one line, not two).
  const oldCount = Math.max(1, countLines(text.slice(start, end)));
  const newCount = countLines(inserted);
  const how = kind === 'exact' ? '' : kind === 'normalized' ? ' (matched after normalizing quotes, dashes and spaces)' : ' (matched ignoring indentation)';
  const where = oldCount === 1 ? `line ${firstLine}` : `lines ${firstLine}–${firstLine + oldCount - 1}`;
  return change(files, path, text, updated, { ok: true, changed: true, text: `edited ${path}: replaced ${where} (${plural(oldCount, 'line')} → ${plural(newCount, 'line')})${how}` });
}

/** Runs a plan: a final outcome as it is, a change written. */
export async function applyPlan(plan: ToolPlan): Promise<ToolOutcome> {
  return plan.kind === 'final' ? plan.outcome : plan.apply();
}

export const writeFile = async (files: ProjectFiles, args: Record<string, unknown>): Promise<ToolOutcome> => applyPlan(await planWrite(files, args));
export const editFile = async (files: ProjectFiles, args: Record<string, unknown>): Promise<ToolOutcome> => applyPlan(await planEdit(files, args));
