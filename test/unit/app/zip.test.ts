// The project's "Download as zip": a store-only zip we write ourselves, checked by real tools: Python's
// zipfile (-t tests every CRC; the contents are read back and compared) and Info-ZIP's unzip -t when the
// machine has it. CRC-32 against known check values.
import { describe, expect, test } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32, zipFiles, ZipError } from '../../../src/app/zip.ts';

const files = [
  { path: 'index.html', data: '<!doctype html>\n<h1>Counter</h1>\n<script src="app.js"></script>\n' },
  { path: 'app.js', data: 'let n = 0;\ndocument.body.onclick = () => console.log(++n);\n' },
  { path: 'css/style.css', data: 'body { font: 18px system-ui; }\n' },
  { path: 'notes/ünïcode näme.txt', data: 'ünïcode ✓\n' },
  { path: 'empty.txt', data: '' },
  { path: 'bytes.bin', data: new Uint8Array(Array.from({ length: 1000 }, (_, i) => (i * 37) & 255)) },
];




describe('store-only zip', () => {
  test('CRC-32 check values', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
    expect(crc32(new TextEncoder().encode('The quick brown fox jumps over the lazy dog'))).toBe(0x414fa339);
  });

  test('Python\'s zipfile tests it and reads every file back as written', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pooled-zip-'));
    try {
      const zip = path.join(dir, 'project.zip');
      writeFileSync(zip, zipFiles(files, new Date(2026, 0, 2, 3, 4, 6)));
      expect(execFileSync('python3', ['-m', 'zipfile', '-t', zip], { encoding: 'utf8' })).toMatch(/Done testing/);
      const read = `import zipfile, sys, json, base64
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps([[i.filename, base64.b64encode(z.read(i)).decode(), i.compress_type, list(i.date_time)] for i in z.infolist()]))`;
      const back = JSON.parse(execFileSync('python3', ['-c', read, zip], { encoding: 'utf8' })) as [string, string, number, number[]][];
      expect(back.map((b) => b[0])).toEqual(files.map((f) => f.path));
      back.forEach(([, b64, method, when], i) => {
        const want = files[i]!.data;
        expect(Buffer.from(b64, 'base64').equals(Buffer.from(typeof want === 'string' ? new TextEncoder().encode(want) : want))).toBe(true);
        expect(method).toBe(0);                       // stored
        expect(when).toEqual([2026, 1, 2, 3, 4, 6]);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Info-ZIP unzip -t finds no error', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pooled-zip-'));
    try {
      const zip = path.join(dir, 'project.zip');
      writeFileSync(zip, zipFiles(files));
      const out = execFileSync('unzip', ['-t', zip], { encoding: 'utf8' });
      expect(out).toMatch(/No errors detected/);
      expect(execFileSync('unzip', ['-p', zip, 'app.js'], { encoding: 'utf8' })).toBe(files[1]!.data);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('paths a zip must not hold are refused by name; a leading ./ is dropped', () => {
    expect(() => zipFiles([{ path: '../etc/passwd', data: 'x' }])).toThrow(ZipError);
    expect(() => zipFiles([{ path: 'a//b', data: 'x' }])).toThrow(/not a file path/);
    const z = zipFiles([{ path: './a.txt', data: 'x' }]);
    expect(new TextDecoder().decode(z.subarray(30, 35))).toBe('a.txt');
  });
});
