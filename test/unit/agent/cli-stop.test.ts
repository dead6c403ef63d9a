// `npm run agent` spawned as a user runs it, against a scripted OpenAI-compatible server: Ctrl-C (SIGINT)
// is the app's Stop — the request ends `stopped` with the partial answer kept, the summary and the --json
// line printed, exit 0 — and --transcript is on disk as the run goes, not only at its end.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { startOpenAIServer } from '../../helpers/openai-server.ts';
import { call } from './harness.ts';

const dirs: string[] = [];
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

const roles = async (file: string) => (await readFile(file, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as { role: string; step?: number; text: string });

// Spawning tsx and loading the 151,669-token vocabulary takes 5–20 s on a busy 2-core CI machine.
test('Ctrl-C stops the request as Stop does: partial answer kept, summary printed, exit 0; the transcript was on disk meanwhile (26.7)', { timeout: 120_000 }, async () => {
  const server = await startOpenAIServer({
    kind: 'llama.cpp', nCtx: 8192,
    replies: [
      { text: call('write_file', { path: 'a.txt', content: 'first step' }) },
      { chunks: Array.from({ length: 600 }, (_, i) => `w${i} `), delayMs: 50 },   // 30 s unless stopped
    ],
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-cli-stop-'));
  dirs.push(dir);
  const transcript = path.join(dir, 'run.jsonl');
  const child = spawn(process.execPath, [
    '--import', 'tsx', '--import', './bin/wgsl-loader.mjs', 'bin/agent.ts',
    '--project', path.join(dir, 'proj'), '--openai', server.url, '--model', 'qwen3-test', '--json', '--transcript', transcript, '--request', 'Write a.txt',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    // The second answer is streaming: step 1's turns are already in the transcript.
    await vi.waitFor(() => expect(server.chunksSent[1] ?? 0).toBeGreaterThanOrEqual(3), { timeout: 90_000, interval: 100 });
    const during = await roles(transcript);
    expect(during.map((l) => l.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(during[3]!.text).toContain('created a.txt (1 line)');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const result = JSON.parse(lines.at(-1)!) as { reason: string; steps: number; summary: string };
    expect(result).toMatchObject({ reason: 'stopped', steps: 2 });
    expect(lines.at(-2)).toBe(result.summary);
    expect(result.summary).toMatch(/^2 steps · 1 tool call · .* · stopped$/);
    expect(stdout).toMatch(/^ {2}w0 w1 w2\b/m);                    // the partial answer, printed
    expect(stderr).toContain('· stopping');
    const after = await roles(transcript);
    expect(after.slice(0, 4)).toEqual(during);                   // appended to, not rewritten
    expect(after.at(-1)).toMatchObject({ role: 'assistant', step: 2, text: expect.stringContaining('w0 w1 w2 ') });
    await vi.waitFor(() => expect(server.closedEarly).toBe(1));  // the HTTP request was aborted
  } finally {
    child.kill('SIGKILL');
    await server.close();
  }
});
