// The CLIs on hybrid models, spawned as a user runs them: make-tiny-model --hybrid writes exactly the
// golden checkpoints (the command lines recorded in tiny-hybrid-greedy.json), and generate --prompt-ids
// gives their golden ids from a folder and from a .gguf file.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HYBRID_GOLDEN_FILE, hybridGoldenCli, hybridGoldenSource, type HybridGoldenFile } from '../../../goldens/hybrid-golden-setup.ts';

const root = resolve(import.meta.dirname, '../../../..');
const golden = JSON.parse(await readFile(HYBRID_GOLDEN_FILE, 'utf8')) as HybridGoldenFile;
const SLOW = 240_000;

interface Run { code: number; stdout: string; stderr: string }
function node(script: string, args: string[]): Promise<Run> {
  return new Promise((ok) => {
    execFile(process.execPath, ['--import', 'tsx', '--import', './bin/wgsl-loader.mjs', script, ...args],
      { cwd: root, timeout: SLOW, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' } },
      (err, stdout, stderr) => ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** The recorded command line's flags, with DIR replaced. */
const flags = (cli: string, out: string) => cli.replace(/^npm run make-tiny-model -- /, '').replace('DIR', out).split(' ');

describe('make-tiny-model --hybrid', () => {
  let tmp: string;
  beforeAll(async () => { tmp = await mkdtemp(join(tmpdir(), 'pooled-hybrid-cli-')); });
  afterAll(async () => rm(tmp, { recursive: true, force: true }));

  it.each(['moe-safetensors', 'dense-Q4_K_M'] as const)('the recorded command line for %s writes the golden model byte for byte', async (name) => {
    const out = join(tmp, name);
    const r = await node('bin/make-tiny-model.ts', flags(hybridGoldenCli(name), out));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lib = await hybridGoldenSource(name);
    const libDir = lib.endsWith('.gguf') ? lib.slice(0, lib.lastIndexOf('/')) : lib;
    const files = (await readdir(libDir)).sort();
    expect((await readdir(out)).sort()).toEqual(files);
    for (const f of files) expect(sha(await readFile(join(out, f)))).toBe(sha(await readFile(join(libDir, f))));
  }, SLOW);

  it('refuses hybrid flags without --hybrid and MLC with it, exit 2', async () => {
    const a = await node('bin/make-tiny-model.ts', ['--out', join(tmp, 'a'), '--linear-value-heads', '8']);
    expect([a.code, a.stderr]).toEqual([2, expect.stringMatching(/^make-tiny-model: --linear-value-heads needs --hybrid/)]);
    const b = await node('bin/make-tiny-model.ts', ['--out', join(tmp, 'b'), '--hybrid', '--format', 'mlc']);
    expect([b.code, b.stderr]).toEqual([2, expect.stringMatching(/--hybrid needs --format safetensors or gguf/)]);
    const c = await node('bin/make-tiny-model.ts', ['--out', join(tmp, 'c'), '--hybrid', '--linear-key-heads', '3', '--linear-value-heads', '4']);
    expect([c.code, c.stderr]).toEqual([2, expect.stringMatching(/--linear-value-heads 4 must be a multiple of --linear-key-heads 3/)]);
  }, SLOW);
});

describe('generate --prompt-ids on hybrid models', () => {
  it.each(['dense-safetensors', 'moe-Q8_0'] as const)('%s gives its golden', async (name) => {
    const r = await node('bin/generate.ts', ['--model', await hybridGoldenSource(name), '--prompt-ids', golden.promptIds.join(','), '--max-new-tokens', '32', '--json']);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { ids: number[]; stats: Record<string, unknown> };
    expect(out.ids).toEqual(golden.models[name].ids);
    expect(out.stats).toMatchObject({ format: name.endsWith('safetensors') ? 'safetensors' : 'gguf', promptComputed: golden.promptIds.length });
  }, SLOW);
});
