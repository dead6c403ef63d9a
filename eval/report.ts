// The eval's table: one row per run (task, check result, steps, tool calls, tokens, seconds, end
// reason), printed and written to eval-results/ as Markdown and JSON.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EvalRow } from './run.ts';

const COLUMNS = ['task', 'check', 'steps', 'tool calls', 'tokens', 'seconds', 'end reason'] as const;

function cells(r: EvalRow): string[] {
  const name = r.variant === 'model' || r.variant === 'solution' ? r.task : `${r.task} (${r.variant})`;
  const verdict = r.passed ? 'pass' : 'fail';
  const check = r.expected === 'fail' ? `${verdict} (${r.passed ? 'WRONG: should fail' : 'expected'})` : verdict;
  return [name, check, String(r.steps), String(r.toolCalls), String(r.tokens), r.seconds.toFixed(1), r.reason || '—'];
}

/** A row is as it should be: the model or right answer passes its check, a broken answer fails it. */
export const rowOk = (r: EvalRow): boolean => r.passed === (r.expected === 'pass');

export function summaryOf(rows: readonly EvalRow[]): string {
  const answers = rows.filter((r) => r.expected === 'pass');
  const broken = rows.filter((r) => r.expected === 'fail');
  const parts = [`${answers.filter((r) => r.passed).length} of ${answers.length} tasks pass`];
  if (broken.length > 0) parts.push(`${broken.filter((r) => !r.passed).length} of ${broken.length} broken answers fail their check`);
  return parts.join('; ');
}

/** The table as aligned plain text (the terminal) and as Markdown (the file). */
export function formatTable(rows: readonly EvalRow[], markdown = false): string {
  const body = rows.map(cells);
  if (markdown) {
    const line = (c: readonly string[]) => `| ${c.join(' | ')} |`;
    return [line(COLUMNS), line(COLUMNS.map(() => '---')), ...body.map(line)].join('\n');
  }
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...body.map((r) => r[i]!.length)));
  const line = (c: readonly string[]) => c.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(COLUMNS), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** Writes eval-results/<stamp>/results.{md,json}; returns the folder. */
export async function writeReport(rows: readonly EvalRow[], meta: Record<string, string>, folder: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const failures = rows.filter((r) => !rowOk(r)).map((r) => `- ${r.task} (${r.variant}): ${r.detail || r.reason}`);
  const md = [
    `# Eval: ${meta.backend ?? ''}`, '', ...Object.entries(meta).map(([k, v]) => `- ${k}: ${v}`), '',
    formatTable(rows, true), '', summaryOf(rows), '', ...(failures.length ? ['Not as expected:', ...failures, ''] : []),
  ].join('\n');
  await writeFile(path.join(folder, 'results.md'), md);
  await writeFile(path.join(folder, 'results.json'), JSON.stringify({ meta, rows }, null, 2));
  return folder;
}
