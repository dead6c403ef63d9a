// Issue 39, item 6: the agent's file tools against a hostile model, on the CLI's folder store (a real
// folder on disk). Tool errors name project-relative paths only, a write that fails leaves no folders it
// made, and names with bidirectional control characters are refused with a reason. Each test checks that
// a file that was in the project before the attack is unchanged after it, and logs its time to refusal.
import { afterEach, describe, expect, test } from 'vitest';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NodeFolderFiles } from '../../../src/agent/files/node-folder.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';
import type { ToolOutcome } from '../../../src/agent/tool-types.ts';

const KEEP = '<!doctype html><title>kept</title>\n';
const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A project folder holding index.html, its store, and the write_file tool over it (the error as the model sees it). */
async function project(): Promise<{ root: string; write: (args: Record<string, unknown>) => Promise<ToolOutcome>; read: (p: string) => Promise<ToolOutcome> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'pooled-names-'));
  temps.push(root);
  await writeFile(path.join(root, 'index.html'), KEEP);
  const files = await NodeFolderFiles.open(root);
  const registry = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
  const run = async (name: string, args: Record<string, unknown>): Promise<ToolOutcome> => {
    try { return await registry.get(name)!.run(args, {}); } catch (e) { return { ok: false, error: `${name} failed: ${(e as Error).message}` }; } // as call-runner.ts words a throw
  };
  return { root, write: (args) => run('write_file', args), read: (p) => run('read_file', { path: p }) };
}

/** Every entry under `dir`, as relative paths. */
async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

describe('item 6: the agent\'s file tools', () => {
  test('item 6: a 300-character name: the error names the project path, never the host\'s absolute one; nothing is left behind', async () => {
    const { root, write } = await project();
    const name = `${'a'.repeat(300)}.js`;
    const t0 = performance.now();
    const r = await write({ path: name, content: 'x' });
    console.log(`item 6: a 300-character name refused in ${(performance.now() - t0).toFixed(1)} ms`);
    expect(r.ok).toBe(false);
    const error = (r as { error: string }).error;
    expect(error).toMatch(/name longer than the file system allows.*ENAMETOOLONG/);
    expect(error).toContain(name);
    expect(error).not.toContain(root);
    expect(error).not.toContain(tmpdir());
    expect(await tree(root)).toEqual(['index.html']);
    expect(await readFile(path.join(root, 'index.html'), 'utf8')).toBe(KEEP);
  });

  test('item 6: a deep write that fails removes the 20 folders it created; folders that were there stay', async () => {
    const { root, write } = await project();
    await write({ path: 'src/keep.js', content: 'kept\n' });
    const deep = `src/${Array.from({ length: 20 }, (_, i) => `d${i}`).join('/')}/${'b'.repeat(300)}.js`;
    const t0 = performance.now();
    const r = await write({ path: deep, content: 'x' });
    console.log(`item 6: a failing deep write refused and cleaned up in ${(performance.now() - t0).toFixed(1)} ms`);
    expect(r.ok).toBe(false);
    expect((r as { error: string }).error).not.toContain(root);
    expect(await tree(root)).toEqual(['index.html', 'src', 'src/keep.js']);
    expect(await readFile(path.join(root, 'index.html'), 'utf8')).toBe(KEEP);
  });

  test.each([
    ['U+202E', '\u202E'], ['U+202A', '\u202A'], ['U+202B', '\u202B'], ['U+202C', '\u202C'], ['U+202D', '\u202D'],
    ['U+2066', '\u2066'], ['U+2067', '\u2067'], ['U+2068', '\u2068'], ['U+2069', '\u2069'], ['U+200E', '\u200E'], ['U+200F', '\u200F'], ['U+061C', '\u061C'],
  ])('item 6: a file name holding %s is refused with a reason, and written nowhere', async (code, ch) => {
    const { root, write, read } = await project();
    const t0 = performance.now();
    const r = await write({ path: `src/invoice${ch}lmth.js`, content: 'alert(1)' });
    const ms = performance.now() - t0;
    if (code === 'U+202E') console.log(`item 6: a right-to-left override in a name refused in ${ms.toFixed(1)} ms`);
    expect(r.ok).toBe(false);
    const error = (r as { error: string }).error;
    expect(error).toMatch(new RegExp(`invisible bidirectional control character \\(${code.replace('+', '\\+')}\\)`));
    expect(error).not.toContain(ch); // the message itself reads as it is (the character written as an escape)
    expect((await read(`a${ch}b.txt`)).ok).toBe(false);
    expect(await tree(root)).toEqual(['index.html']);
    expect(await readFile(path.join(root, 'index.html'), 'utf8')).toBe(KEEP);
  });

  test('item 6: the browser\'s stores refuse the same names (the check is in the path rules every store uses)', async () => {
    const files = new MemoryFiles();
    await files.write('index.html', KEEP);
    await expect(files.write('x\u202Etxt.js', 'x')).rejects.toThrow(/bidirectional control character \(U\+202E\)/);
    expect(await files.allFiles()).toEqual(['index.html']);
    expect(await files.readText('index.html')).toBe(KEEP);
  });
});
