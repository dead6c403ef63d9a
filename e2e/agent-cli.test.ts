// `npm run agent -- --preview`: the headless loop with the real preview (headless Chromium) — a page with
// an error is served, the error comes back to the model, the fix is served clean, and the next step that
// changes nothing ends the request as done.
import { afterAll, expect, test } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runAgentCli } from '../src/agent/cli.ts';

const dirs: string[] = [];
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

test('the CLI serves through headless Chromium: error, fix, clean serve, then done', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-cli-preview-'));
  dirs.push(dir);
  const broken = '<!doctype html>\n<html><body><h1>Hi</h1>\n<script>missingFunction();</script>\n</body></html>\n';
  const script = [
    call('write_file', { path: 'index.html', content: broken }),
    call('serve', {}),
    call('edit_file', { path: 'index.html', old: 'missingFunction();', new: "console.log('ok');" }),
    call('serve', {}),
    call('read_file', { path: 'index.html' }),
    'never used: the clean serve and an unchanged step end it',
  ];
  const file = path.join(dir, 'script.jsonl');
  await writeFile(file, script.map((text) => JSON.stringify({ text })).join('\n'));
  const lines: string[] = [];
  const code = await runAgentCli(['--project', path.join(dir, 'proj'), '--replay', file, '--preview', '--json', 'Make a page'], { out: (l) => lines.push(l) });
  expect(code).toBe(0);
  const serves = lines.flatMap((l, i) => (/^[←✗] (Served|Reloaded) /.test(l) ? [`${l}\n${lines[i + 1]}`] : []));
  expect(serves.length).toBe(2);
  expect(serves[0]).toMatch(/1 error:\n    .*missingFunction/);
  expect(serves[1]).toMatch(/no errors\./);
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({ reason: 'done', steps: 5, toolCalls: 5 });
  expect(await readFile(path.join(dir, 'proj', 'index.html'), 'utf8')).toContain("console.log('ok');");
}, 240_000);
