import { describe, expect, test } from 'vitest';
import { MemoryFiles } from '../../../src/agent/files/memory.ts';
import { buildManifest, findScript } from '../../../src/preview/manifest.ts';
import { splitServeTarget } from '../../../src/preview/serve-target.ts';
import { PreviewError } from '../../../src/preview/types.ts';
import { pathOfVirtualUrl, resolveReference, virtualUrl } from '../../../src/preview/urls.ts';

const V = 'http://pooled-preview.invalid:5173';

describe('virtual URLs', () => {
  test('references resolve inside the served folder; others are left alone', () => {
    expect(resolveReference('./lib.js', 'js/main.js', 5173)).toBe('js/lib.js');
    expect(resolveReference('../img/a%20b.png?v=2#x', 'js/main.js', 5173)).toBe('img/a b.png');
    expect(resolveReference('/data.json', 'deep/er/page.html', 5173)).toBe('data.json');
    expect(resolveReference('../../../../escape.js', 'a/b.js', 5173)).toBe('escape.js'); // URLs cannot climb above /
    expect(resolveReference('sub/', 'index.html', 5173)).toBe('sub/index.html');
    expect(resolveReference('https://cdn.example/x.js', 'index.html', 5173)).toBeNull();
    expect(resolveReference('#top', 'index.html', 5173)).toBeNull();
    expect(resolveReference('data:text/plain,hi', 'index.html', 5173)).toBeNull();
    expect(virtualUrl(5174, 'img/a b.png')).toBe('http://pooled-preview.invalid:5174/img/a%20b.png');
    expect(pathOfVirtualUrl(new URL(`${V}/`))).toBe('index.html');
  });

  test('scripts are found the way a bundler finds them', () => {
    const have = new Set(['a.ts', 'b.js', 'c/index.ts', 'd.tsx']);
    const exists = (p: string) => have.has(p);
    expect(findScript('a', exists)).toBe('a.ts');
    expect(findScript('a.js', exists)).toBe('a.ts'); // TS-style ESM import of a .ts file
    expect(findScript('b.js', exists)).toBe('b.js');
    expect(findScript('c', exists)).toBe('c/index.ts');
    expect(findScript('d.jsx', exists)).toBe('d.tsx');
    expect(findScript('nope.js', exists)).toBeNull();
  });
});

describe('buildManifest', () => {
  test('files of the folder only; specifiers and url()s point at virtual URLs; lines kept; bytes as base64', async () => {
    const files = new MemoryFiles({
      'site/index.html': '<script type="module" src="main.js"></script>',
      'site/main.js': `import { x } from './lib.js';\nimport missing from './gone.js';\nimport React from 'react';\nconsole.log(x);`,
      'site/lib.js': 'export const x = 1;',
      'site/css/style.css': 'body { background: url(../img/bg.png); }\n.x { background: url(nope.png); }',
      'site/img/bg.png': new Uint8Array([137, 80, 78, 71]),
      'other/secret.txt': 'not served',
    });
    const m = await buildManifest({ files, folder: 'site', page: 'index.html', port: 5173 });
    expect(Object.keys(m.files).sort()).toEqual(['css/style.css', 'img/bg.png', 'index.html', 'lib.js', 'main.js']);
    expect(m.files['main.js']!.text).toBe(`import { x } from '${V}/lib.js';\nimport missing from '${V}/gone.js';\nimport React from 'react';\nconsole.log(x);`);
    expect(m.files['main.js']!.imports).toEqual([
      { ref: './lib.js', path: 'lib.js', found: true },
      { ref: './gone.js', path: 'gone.js', found: false },
    ]);
    expect(m.missing).toEqual([`${V}/gone.js`]);
    expect(m.files['css/style.css']!.text).toBe(`body { background: url("${V}/img/bg.png"); }\n.x { background: url("${V}/css/nope.png"); }`);
    expect(m.files['css/style.css']!.refs).toEqual([
      { ref: '../img/bg.png', path: 'img/bg.png', found: true },
      { ref: 'nope.png', path: 'css/nope.png', found: false },
    ]);
    expect(m.files['img/bg.png']).toEqual({ mime: 'image/png', base64: 'iVBORw==' });
    expect(m.files['index.html']!.text).toBe('<script type="module" src="main.js"></script>');
    expect(m.origin).toBe(V);
  });

  test('TypeScript goes through the transpiler; its errors become a module that throws them', async () => {
    const files = new MemoryFiles({ 'main.ts': `import { n } from './util';\nconst a: number = n;`, 'util.ts': 'export const n: number = 2;', 'bad.tsx': 'const = ;' });
    const seen: string[] = [];
    const m = await buildManifest({
      files, folder: '', page: 'index.html', port: 5173,
      transpile: async (code, path) => {
        seen.push(path);
        return path === 'bad.tsx' ? { error: 'bad.tsx:1:7 Expected identifier but found "="' } : { code: code.replace(/: number/g, '') };
      },
    });
    expect(seen.sort()).toEqual(['bad.tsx', 'main.ts', 'util.ts']);
    expect(m.files['main.ts']!.text).toBe(`import { n } from '${V}/util.ts';\nconst a = n;`);
    expect(m.files['bad.tsx']!.error).toBe('bad.tsx:1:7 Expected identifier but found "="');
    expect(m.files['bad.tsx']!.text).toBe('throw new SyntaxError("bad.tsx:1:7 Expected identifier but found \\"=\\"");');
  });

  test('without a transpiler a .ts file says so', async () => {
    const m = await buildManifest({ files: new MemoryFiles({ 'a.ts': 'let x = 1' }), folder: '', page: 'index.html', port: 5173 });
    expect(m.files['a.ts']!.error).toMatch(/a\.ts: TypeScript\/JSX needs the bundler/);
  });
});

describe('serve targets', () => {
  const files = new MemoryFiles({ 'index.html': 'root', 'app/index.html': 'a', 'app/about.html': 'b' });
  test('folder, nested page, root forms', async () => {
    expect(await splitServeTarget(files, '')).toEqual({ folder: '', page: 'index.html' });
    expect(await splitServeTarget(files, '.')).toEqual({ folder: '', page: 'index.html' });
    expect(await splitServeTarget(files, './app/')).toEqual({ folder: 'app', page: 'index.html' });
    expect(await splitServeTarget(files, 'app/about.html')).toEqual({ folder: 'app', page: 'about.html' });
    expect(await splitServeTarget(files, 'index.html')).toEqual({ folder: '', page: 'index.html' });
  });
  test('a missing folder or a path leaving the project is a named error', async () => {
    await expect(splitServeTarget(files, 'nope')).rejects.toThrow(new PreviewError('cannot serve "nope": there is no such folder in the project'));
    await expect(splitServeTarget(files, '../x')).rejects.toBeInstanceOf(PreviewError);
  });
});
