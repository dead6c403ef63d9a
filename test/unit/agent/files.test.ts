// ProjectFiles in memory and in a Node folder behave the same, and no path leaves the project root.
// (IndexedDB is covered in real Chromium by e2e/agent-files.test.ts.)
import { afterEach, describe, expect, test } from 'vitest';
import { mkdtemp, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ProjectFiles } from '../../../src/agent/files/types.ts';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { NodeFolderFiles } from '../../../src/agent/files/node-folder.ts';
import { normalizeProjectPath, ProjectFileError, ProjectPathError } from '../../../src/agent/files/paths.ts';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-files-'));
  temps.push(dir);
  return dir;
}

describe('normalizeProjectPath', () => {
  test('canonical forms', () => {
    expect(normalizeProjectPath('./src//game.js')).toBe('src/game.js');
    expect(normalizeProjectPath('src/./a/')).toBe('src/a');
    expect(normalizeProjectPath('.')).toBe('');
    expect(normalizeProjectPath('')).toBe('');
  });
  test.each([
    ['../secret', /leaves the project root/],
    ['src/../../x', /leaves the project root/],
    ['/etc/passwd', /absolute/],
    ['C:/Windows', /drive letter/],
    ['src\\game.js', /backslash/],
    ['a\0b', /NUL/],
    ['~/x', /home folder/],
  ])('%j is refused with a named error', (input, message) => {
    expect(() => normalizeProjectPath(input)).toThrow(ProjectPathError);
    expect(() => normalizeProjectPath(input)).toThrow(message);
  });
});

const stores: [string, () => Promise<ProjectFiles>][] = [
  ['memory', async () => new MemoryFiles()],
  ['node folder', async () => NodeFolderFiles.open(await tempDir())],
];

describe.each(stores)('ProjectFiles (%s)', (_name, make) => {
  test('write, read, list (dirs first, then by name), allFiles, remove, change events', async () => {
    const files = await make();
    const changed: string[] = [];
    const off = files.onChange((p) => changed.push(p));
    await files.write('index.html', '<!doctype html>');
    await files.write('src/game.js', 'let x = 1;\n');
    await files.write('src/lib/util.js', 'export {}');
    await files.write('b.css', new Uint8Array([97, 98]));
    expect(await files.readText('src/game.js')).toBe('let x = 1;\n');
    expect(await files.readText('./b.css')).toBe('ab');
    expect(await files.readBytes('b.css')).toEqual(new Uint8Array([97, 98]));
    expect(await files.readText('missing.js')).toBeNull();
    expect(await files.readBytes('missing.js')).toBeNull();
    const root = await files.list('');
    expect(root.map((e) => [e.name, e.kind, e.size])).toEqual([['src', 'dir', 0], ['b.css', 'file', 2], ['index.html', 'file', 15]]);
    expect((await files.list('src')).map((e) => e.path)).toEqual(['src/lib', 'src/game.js']);
    expect(await files.allFiles()).toEqual(['b.css', 'index.html', 'src/game.js', 'src/lib/util.js']);
    await files.remove('src/lib/util.js');
    expect(await files.allFiles()).toEqual(['b.css', 'index.html', 'src/game.js']);
    off();
    await files.write('after.txt', 'x');
    expect(changed).toEqual(['index.html', 'src/game.js', 'src/lib/util.js', 'b.css', 'src/lib/util.js']);
  });

  test('bad paths and missing things are named errors and change nothing', async () => {
    const files = await make();
    await files.write('a.txt', 'A');
    await expect(files.write('../escape.txt', 'x')).rejects.toThrow(ProjectPathError);
    await expect(files.readText('/etc/passwd')).rejects.toThrow(/absolute/);
    await expect(files.list('nope')).rejects.toThrow(ProjectFileError);
    await expect(files.list('a.txt')).rejects.toThrow(/not a folder/);
    await expect(files.remove('nope.txt')).rejects.toThrow(/does not exist/);
    await expect(files.write('a.txt/b.txt', 'x')).rejects.toThrow(ProjectFileError);
    await expect(files.write('', 'x')).rejects.toThrow(/project root/);
    expect(await files.allFiles()).toEqual(['a.txt']);
    expect(await files.readText('a.txt')).toBe('A');
  });
});

test('a Node folder refuses a symlink that leads outside the project, and hides .git / node_modules', async () => {
  const outside = await tempDir();
  const root = await tempDir();
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await symlink(outside, path.join(root, 'link'));
  await mkdir(path.join(root, '.git'));
  await writeFile(path.join(root, '.git', 'HEAD'), 'ref');
  await writeFile(path.join(root, 'ok.txt'), 'ok');
  const files = await NodeFolderFiles.open(root);
  await expect(files.readText('link/secret.txt')).rejects.toThrow(/outside the project root/);
  await expect(files.write('link/new.txt', 'x')).rejects.toThrow(/outside the project root/);
  expect((await files.list('')).map((e) => e.name)).not.toContain('.git');
  await expect(NodeFolderFiles.open(path.join(root, 'missing'))).rejects.toThrow(ProjectFileError);
});
