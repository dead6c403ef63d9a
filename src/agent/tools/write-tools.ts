// The file-changing tools: write_file and edit_file, with their guards (docs/agent.md, Repairs and guards).
import type { ProjectFiles } from '../files/types.ts';
import type { ToolOutcome } from '../tool-types.ts';
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

export async function writeFile(files: ProjectFiles, args: Record<string, unknown>): Promise<ToolOutcome> {
  const path = normalizeFilePath(stringArg(args, 'path', 'write_file'));
  const content = restoreControlTokens(stringArg(args, 'content', 'write_file'));
  const append = optionalBool(args, 'append', 'write_file');
  const existing = await files.readText(path);

  if (append && existing !== null && existing !== '') {
    if (startsLikeFile(existing, content)) {
      if (content === existing) return { ok: true, changed: false, text: `${path} is unchanged: it already has exactly this content. ${UNCHANGED_NOTE}` };
      await files.write(path, content);
      return { ok: true, changed: true, text: `wrote ${path} (${plural(countLines(content), 'line')}): this append started like the file itself, so it replaced the file instead of doubling it` };
    }
    const joined = existing.endsWith('\n') || content.startsWith('\n') ? existing + content : existing + '\n' + content;
    await files.write(path, joined);
    return { ok: true, changed: true, text: `appended ${plural(countLines(content), 'line')} to ${path} (now ${plural(countLines(joined), 'line')})` };
  }
  if (existing === content) {
    return { ok: true, changed: false, text: `${path} is unchanged: it already has exactly this content. ${UNCHANGED_NOTE}` };
  }
  if (!append && existing !== null && /\.html?$/i.test(path) && isWholePage(existing) && !isWholePage(content)) {
    return {
      ok: false,
      error: `refused: ${path} is a whole HTML page and this content is only a fragment of one (no <!doctype> or <html>). ` +
        'Use edit_file to change part of it, or write the whole page.',
    };
  }
  await files.write(path, content);
  const verb = existing === null ? 'created' : 'wrote';
  return { ok: true, changed: true, text: `${verb} ${path} (${plural(countLines(content), 'line')})` };
}

export async function editFile(files: ProjectFiles, args: Record<string, unknown>): Promise<ToolOutcome> {
  const path = normalizeFilePath(stringArg(args, 'path', 'edit_file'));
  const old = stringArg(args, 'old', 'edit_file');
  const replacement = restoreControlTokens(stringArg(args, 'new', 'edit_file'));
  const text = await files.readText(path);
  if (text === null) return { ok: false, error: `no such file: ${path} (create it with write_file)` };
  if (old === '') return { ok: false, error: 'old is empty: copy the exact lines to replace from the file' };
  if (old === replacement) return { ok: true, changed: false, text: `${path} is unchanged: old and new are the same. ${UNCHANGED_NOTE}` };

  const match = findEdit(text, old, replacement);
  if ('none' in match) {
    return { ok: false, error: `old was not found in ${path}. The closest lines are:\n${closestLines(text, old)}` };
  }
  if ('many' in match) {
    return { ok: false, error: `old matches ${match.many} places in ${path}: include more of the surrounding lines so it matches once` };
  }
  const { start, end, replacement: inserted, kind } = match.found;
  const updated = text.slice(0, start) + inserted + text.slice(end);
  if (updated === text) return { ok: true, changed: false, text: `${path} is unchanged: it already has that text. ${UNCHANGED_NOTE}` };
  await files.write(path, updated);
  const firstLine = text.slice(0, start).split('\n').length;
  const oldCount = text.slice(start, end).split('\n').length;
  const newCount = inserted.split('\n').length;
  const how = kind === 'exact' ? '' : kind === 'normalized' ? ' (matched after normalizing quotes, dashes and spaces)' : ' (matched ignoring indentation)';
  const where = oldCount === 1 ? `line ${firstLine}` : `lines ${firstLine}–${firstLine + oldCount - 1}`;
  return { ok: true, changed: true, text: `edited ${path}: replaced ${where} (${plural(oldCount, 'line')} → ${plural(newCount, 'line')})${how}` };
}
