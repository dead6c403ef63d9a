// Issue 12, items 1–2: the CLI's folder store against a hostile model (or a hostile project folder).
// Nothing outside the project, and nothing in .git/ or node_modules/, can be read or written.
import { afterEach, describe, expect, test } from 'vitest';
import { link, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NodeFolderFiles } from '../../../src/agent/files/node-folder.ts';
import { ProjectPathError } from '../../../src/agent/files/paths.ts';
import { createFileTools } from '../../../src/agent/tools/file-tools.ts';
import { NodeRegexRunner } from '../../../src/agent/tools/regex-runner.ts';
import { ToolRegistry } from '../../../src/agent/tools/registry.ts';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pooled-hostile-'));
  temps.push(dir);
  return dir;
}

describe('item 1: .git/ and node_modules/ are out of reach', () => {
  test('item 1: writing .git/config (an fsmonitor hook would run on the next git status) is refused, the file unchanged', async () => {
    const root = await tempDir();
    await mkdir(path.join(root, '.git'));
    await writeFile(path.join(root, '.git', 'config'), '[core]\n\tbare = false\n');
    const files = await NodeFolderFiles.open(root);
    const hook = '[core]\n\tfsmonitor = "touch /tmp/pwned"\n';
    await expect(files.write('.git/config', hook)).rejects.toThrow(ProjectPathError);
    await expect(files.write('.git/config', hook)).rejects.toThrow(/\.git/);
    expect(await readFile(path.join(root, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
  });

  test.each([
    ['.git/HEAD'], ['./.git/HEAD'], ['src/.git/config'], ['.GIT/config'], ['node_modules/pkg/index.js'], ['a/node_modules/b.js'],
    ['Node_Modules/x.js'],
  ])('item 1: %j can be neither read, written nor removed', async (p) => {
    const root = await tempDir();
    const abs = path.join(root, ...p.replace(/^\.\//, '').split('/'));
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, 'original');
    const files = await NodeFolderFiles.open(root);
    await expect(files.readText(p)).rejects.toThrow(ProjectPathError);
    await expect(files.readBytes(p)).rejects.toThrow(ProjectPathError);
    await expect(files.write(p, 'changed')).rejects.toThrow(ProjectPathError);
    await expect(files.remove(p)).rejects.toThrow(ProjectPathError);
    await expect(files.list(path.posix.dirname(p.replace(/^\.\//, '')))).rejects.toThrow(ProjectPathError);
    expect(await readFile(abs, 'utf8')).toBe('original');
  });

  test('item 1: a file merely named like them (.gitignore, my.git, node_modules.txt) is an ordinary file', async () => {
    const files = await NodeFolderFiles.open(await tempDir());
    for (const p of ['.gitignore', 'my.git', 'node_modules.txt', 'src/.github/ci.yml']) {
      await files.write(p, 'ok');
      expect(await files.readText(p)).toBe('ok');
    }
  });
});

describe('item 2: links never lead out of the project', () => {
  test('item 2: write_file through a dangling symlink does not create the file outside', async () => {
    const outside = await tempDir();
    const root = await tempDir();
    const target = path.join(outside, 'created-outside.txt');
    await symlink(target, path.join(root, 'notes.txt'));           // dangling: target does not exist yet
    const files = await NodeFolderFiles.open(root);
    await expect(files.write('notes.txt', 'escaped')).rejects.toThrow(ProjectPathError);
    await expect(files.write('notes.txt', 'escaped')).rejects.toThrow(/link/);
    expect(existsSync(target)).toBe(false);
    expect((await lstat(path.join(root, 'notes.txt'))).isSymbolicLink()).toBe(true); // left as it was
  });

  test('item 2: a dangling symlinked folder on the way is refused for write, read and list', async () => {
    const outside = await tempDir();
    const root = await tempDir();
    await symlink(path.join(outside, 'not-yet'), path.join(root, 'out'));
    const files = await NodeFolderFiles.open(root);
    await expect(files.write('out/x.txt', 'escaped')).rejects.toThrow(ProjectPathError);
    await expect(files.write('out/deeper/x.txt', 'escaped')).rejects.toThrow(ProjectPathError);
    expect(existsSync(path.join(outside, 'not-yet'))).toBe(false);
    await expect(files.readText('out/x.txt')).rejects.toThrow(ProjectPathError);
    await expect(files.list('out')).rejects.toThrow(ProjectPathError);
  });

  test('item 2: a symlink inside the project, even to a file inside it, is refused on every path component', async () => {
    const root = await tempDir();
    await mkdir(path.join(root, 'src'));
    await writeFile(path.join(root, 'src', 'a.js'), 'A');
    await symlink(path.join(root, 'src'), path.join(root, 'alias'));
    await symlink(path.join(root, 'src', 'a.js'), path.join(root, 'b.js'));
    const files = await NodeFolderFiles.open(root);
    await expect(files.readText('alias/a.js')).rejects.toThrow(/link/);
    await expect(files.readText('b.js')).rejects.toThrow(/link/);
    await expect(files.write('b.js', 'B')).rejects.toThrow(/link/);
    await expect(files.remove('b.js')).rejects.toThrow(/link/);
    expect(await readFile(path.join(root, 'src', 'a.js'), 'utf8')).toBe('A');
    expect((await files.list('')).map((e) => e.name)).toEqual(['src']); // links are not listed
  });

  test('item 2: a file with a second hard link (maybe outside the project) is neither read nor written', async () => {
    const outside = await tempDir();
    const root = await tempDir();
    const secret = path.join(outside, 'secret.txt');
    await writeFile(secret, 'secret');
    await link(secret, path.join(root, 'linked.txt'));
    const files = await NodeFolderFiles.open(root);
    await expect(files.readText('linked.txt')).rejects.toThrow(/hard link/);
    await expect(files.write('linked.txt', 'overwritten')).rejects.toThrow(/hard link/);
    expect(await readFile(secret, 'utf8')).toBe('secret');
  });

  test('issue 27: a hard-linked file in the project: a whole-project search still answers, names the file it skipped, and never shows its text', async () => {
    const outside = await tempDir();
    const root = await tempDir();
    await writeFile(path.join(outside, 'secret.txt'), 'needle in the secret');
    await link(path.join(outside, 'secret.txt'), path.join(root, 'linked.txt'));
    await mkdir(path.join(root, 'src'));
    await writeFile(path.join(root, 'src', 'app.js'), 'const a = 1;\nconst needle = 2;\n');
    const files = await NodeFolderFiles.open(root);
    const registry = new ToolRegistry(createFileTools(files, { regexRunner: new NodeRegexRunner() }));
    const search = (args: Record<string, unknown>) => registry.get('search')!.run(args, {});
    const found = await search({ pattern: 'needle' });
    expect(found).toEqual({ ok: true, text: expect.stringMatching(/^src\/app\.js:2: const needle = 2;\n\(not searched: path "linked\.txt" has 2 hard links; .*\)$/) });
    expect(JSON.stringify(found)).not.toMatch(/secret/);
    const none = await search({ pattern: 'absent' });
    expect(none).toEqual({ ok: true, text: expect.stringMatching(/^no matches for "absent" in the project\n\(not searched: path "linked\.txt" has 2 hard links/) });
  });

  test('item 2: an ordinary write replaces the file in one step and keeps its mode', async () => {
    const root = await tempDir();
    const files = await NodeFolderFiles.open(root);
    await files.write('run.sh', '#!/bin/sh\necho 1\n');
    const { chmod } = await import('node:fs/promises');
    await chmod(path.join(root, 'run.sh'), 0o755);
    await files.write('run.sh', '#!/bin/sh\necho 2\n');
    expect(await readFile(path.join(root, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho 2\n');
    expect((await stat(path.join(root, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect(await files.allFiles()).toEqual(['run.sh']); // no temp file left behind
  });
});
