// The read-only file tools: list_dir, read_file, search (limits in limits.ts).
import type { ProjectFiles } from '../files/types.ts';
import type { ToolOutcome } from '../tool-types.ts';
import { normalizeFilePath, normalizeProjectPath, ProjectPathError } from '../files/paths.ts';
import { TOOL_LIMITS as LIMITS } from '../limits.ts';
import { optionalInt, optionalString, plural, stringArg } from './args.ts';
import type { RegexRunner } from './regex-runner.ts';
import { neutralizeControlTokens } from './clip.ts';

/** Room kept for read_file's footer ("(lines 1–120 of 300; read on with start_line: 121)"). */
const FOOTER_CHARS = 100;
/**
 * read_file's characters per call: its own limit, but never more than one tool result holds, so the
 * result cap never cuts a read (a cut would hide lines the footer says were shown).
 */
export const READ_BUDGET = Math.min(LIMITS.readChars, LIMITS.resultChars - FOOTER_CHARS);

export async function listDir(files: ProjectFiles, args: Record<string, unknown>): Promise<ToolOutcome> {
  const dir = normalizeProjectPath(optionalString(args, 'path', 'list_dir') ?? '');
  const entries = await files.list(dir);
  const where = dir === '' ? 'the project root' : dir + '/';
  if (entries.length === 0) return { ok: true, text: dir === '' ? 'The project is empty.' : `${where} is empty.` };
  const shown = entries.slice(0, LIMITS.listEntries).map((e) => (e.kind === 'dir' ? `${e.name}/` : `${e.name} (${formatBytes(e.size)})`));
  const more = entries.length - shown.length;
  const tail = more > 0 ? `\n(${plural(more, 'more entry', 'more entries')} not shown: list a subfolder)` : '';
  return { ok: true, text: `${where}:\n${shown.join('\n')}${tail}` };
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`;
}

export async function readFile(files: ProjectFiles, args: Record<string, unknown>): Promise<ToolOutcome> {
  const path = normalizeFilePath(stringArg(args, 'path', 'read_file'));
  const text = await files.readText(path);
  if (text === null) return { ok: false, error: `no such file: ${path}${await nearbyNames(files, path)}` };
  if (text.includes('\0')) return { ok: false, error: `${path} is a binary file (${formatBytes(new TextEncoder().encode(text).length)}); read_file shows text only` };
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0 || text === '') return { ok: true, text: `${path} is empty.` };
  const start = optionalInt(args, 'start_line', 'read_file') ?? 1;
  if (start < 1 || start > lines.length) {
    return { ok: false, error: `start_line ${start} is outside ${path}, which has ${plural(lines.length, 'line')}` };
  }
  const startChar = optionalInt(args, 'start_char', 'read_file') ?? 1;
  const firstLength = lines[start - 1]!.length;
  if (startChar < 1 || (startChar > firstLength && !(startChar === 1 && firstLength === 0))) {
    return { ok: false, error: `start_char ${startChar} is outside line ${start} of ${path}, which has ${plural(firstLength, 'character')}` };
  }
  const width = String(Math.min(lines.length, start + LIMITS.readLines - 1)).length;
  const out: string[] = [];
  let chars = 0;
  let next = start;
  // Lengths are counted as the model will see them (control tags get a zero-width space), so the whole
  // read plus its footer fits one tool result and is never cut in the middle.
  while (next <= lines.length && out.length < LIMITS.readLines) {
    const from = next === start ? startChar - 1 : 0;
    const head = `${String(next).padStart(width)}| `;
    const line = head + lines[next - 1]!.slice(from);
    if (chars + neutralizeControlTokens(line).length + 1 > READ_BUDGET) {
      if (out.length > 0) break;
      // One line longer than a read: show the part that fits and say where it goes on.
      const taken = fittingPrefix(lines[next - 1]!.slice(from), READ_BUDGET - head.length - 1);
      out.push(head + taken);
      const cutAt = from + taken.length;
      const footer = `(line ${next} of ${lines.length} cut at character ${cutAt} of ${lines[next - 1]!.length}; read on with start_line: ${next}, start_char: ${cutAt + 1})`;
      return { ok: true, text: `${out.join('\n')}\n${footer}` };
    }
    out.push(line);
    chars += neutralizeControlTokens(line).length + 1;
    next++;
  }
  const footer = next <= lines.length
    ? `(lines ${start}–${next - 1} of ${lines.length}; read on with start_line: ${next})`
    : `(end of ${path}: ${plural(lines.length, 'line')})`;
  return { ok: true, text: `${out.join('\n')}\n${footer}` };
}

/**
 * The longest start of `text` that is at most `budget` characters as the model sees it (control tags
 * escaped), never splitting a surrogate pair, and at least one character so a read always moves on.
 */
function fittingPrefix(text: string, budget: number): string {
  let n = Math.min(text.length, budget);
  while (n > 1 && neutralizeControlTokens(text.slice(0, n)).length > budget) n -= Math.max(1, neutralizeControlTokens(text.slice(0, n)).length - budget);
  if (n < text.length && /[\ud800-\udbff]/.test(text[n - 1]!)) n = n > 1 ? n - 1 : n + 1;
  return text.slice(0, n);
}

/** " (did you mean: src/game.js?)" when a file of that name lives elsewhere. */
async function nearbyNames(files: ProjectFiles, path: string): Promise<string> {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const all = await files.allFiles();
  const same = all.filter((p) => p.slice(p.lastIndexOf('/') + 1).toLowerCase() === name).slice(0, 3);
  if (same.length > 0) return ` (did you mean: ${same.join(', ')}?)`;
  return all.length === 0 ? ' (the project is empty)' : '';
}

export async function search(files: ProjectFiles, runner: RegexRunner, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome> {
  const pattern = stringArg(args, 'pattern', 'search');
  if (pattern === '') return { ok: false, error: 'search needs a non-empty pattern' };
  const under = normalizeProjectPath(optionalString(args, 'path', 'search') ?? '');
  const all = await files.allFiles();
  const paths = under === '' ? all : all.filter((p) => p === under || p.startsWith(under + '/'));
  if (under !== '' && paths.length === 0) return { ok: false, error: `no file or folder ${under} in the project` };
  const texts: { path: string; text: string }[] = [];
  // A file the store refuses to read (a second hard link, a path that became a link) is left out and
  // named in a note: one such file must not fail a whole-project search.
  const refused: string[] = [];
  for (const path of paths) {
    let text: string | null;
    try {
      text = await files.readText(path);
    } catch (e) {
      if (!(e instanceof ProjectPathError)) throw e;
      refused.push(e.message);
      continue;
    }
    if (text !== null && !text.includes('\0')) texts.push({ path, text });
  }
  let literal = false;
  let source = pattern;
  try {
    new RegExp(pattern);
  } catch {
    literal = true; // small models often search for "foo(": take an invalid regex as plain text
    source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  const job = { pattern: source, flags: '', files: texts, maxHits: LIMITS.searchHits, lineChars: LIMITS.searchLineChars };
  const reply = await runner.run(job, LIMITS.searchTimeoutMs, signal);
  if ('timedOut' in reply) {
    return { ok: false, error: `the pattern ${JSON.stringify(pattern)} ran over ${LIMITS.searchTimeoutMs / 1000} s and was refused: use a simpler pattern` };
  }
  if ('error' in reply) return { ok: false, error: `invalid pattern: ${reply.error}` };
  const scope = under === '' ? 'the project' : under;
  const note = literal ? ' (not a valid regex, so searched as plain text)' : '';
  const skipped = refused.length === 0 ? '' : `\n(not searched: ${refused.slice(0, 3).join('; ')}${refused.length > 3 ? `; and ${refused.length - 3} more` : ''})`;
  if (reply.total === 0) return { ok: true, text: `no matches for ${JSON.stringify(pattern)} in ${scope}${note}${skipped}` };
  const lines = reply.hits.map((h) => `${h.path}:${h.line}: ${h.text}`);
  const more = reply.total > reply.hits.length ? `\n(${reply.total} hits in all, first ${reply.hits.length} shown: narrow the pattern or the path)` : '';
  return { ok: true, text: `${lines.join('\n')}${more}${note ? '\n' + note.trim() : ''}${skipped}` };
}
