// The "Bindings (declared in …)" blocks at the top of the .wgsl files repeat, for a reader of the shader,
// what the kernel's module declares (src/gpu/kernel.ts generates the WGSL from the module alone). This
// checks every such block against the module, so a block cannot drift: the module it names must export
// the kernels built on the file (or be the module they take the bindings from: a weight format's row),
// and each entry's name, order, address space/access and WGSL type (and a
// uniform's fields, where listed) must be the kernel's. A structure file shared by every weight format
// writes "(weights)" where the format's bindings go (one or more, checked in the format's own file).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Binding, Kernel } from '../../../src/gpu/kernel.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const modules = import.meta.glob('../../../src/gpu/kernels/**/*.ts', { eager: true }) as Record<string, Record<string, unknown>>;

function isKernel(v: unknown): v is Kernel {
  return typeof v === 'object' && v !== null && 'source' in v && 'bindings' in v && 'names' in v;
}

/** Each kernel module (as a repository path) with the kernels it exports. */
const exported: [string, Kernel[]][] = Object.entries(modules).map(([key, m]) => [
  path.relative(root, path.resolve(import.meta.dirname, key)),
  Object.values(m).flatMap((v) => (Array.isArray(v) ? v : [v])).filter(isKernel),
]);

function wgslFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? wgslFiles(p) : f.endsWith('.wgsl') ? [p] : [];
  });
}

export interface HeaderEntry { name: string; access?: Binding['access']; type?: string; fields?: string[] }
export interface Header { module: string; entries: HeaderEntry[] }

const ACCESS: Record<string, Binding['access']> = { uniform: 'uniform', 'storage, read': 'read', 'storage, rw': 'rw' };

/** The leading WGSL type of `s` (`array<vec4<u32>> [n]` → `array<vec4<u32>>`), angle brackets balanced. */
function leadingType(s: string): string {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '<') depth++;
    else if (s[i] === '>') { depth--; if (depth === 0) return s.slice(0, i + 1); }
    else if (depth === 0 && !/[\w]/.test(s[i]!)) return s.slice(0, i);
  }
  return s;
}

/** The file's bindings block, or null when it has none. Throws on an entry it cannot read. */
export function parseHeader(text: string): Header | null {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('// Bindings (declared in '));
  if (at < 0) return null;
  const m = /^\/\/ Bindings \(declared in (\S+?), which generates their WGSL\):$/.exec(lines[at]!);
  if (!m) throw new Error(`unreadable bindings line: ${lines[at]}`);
  const entries: HeaderEntry[] = [];
  for (const line of lines.slice(at + 1)) {
    if (/^\/\/ {4,}\S/.test(line)) continue;                     // a continuation of the entry above
    const e = /^\/\/ {3}(\(weights\)|\w+)\s+(.*)$/.exec(line);
    if (!e) break;
    if (e[1] === '(weights)') { entries.push({ name: '(weights)' }); continue; }
    const a = /^(uniform|storage, read|storage, rw)\s+(.*)$/.exec(e[2]!);
    if (!a) throw new Error(`${e[1]}: no address space in "${line}"`);
    const type = leadingType(a[2]!);
    const fields = /^\s*\{([^}]*)\}/.exec(a[2]!.slice(type.length));
    entries.push({ name: e[1]!, access: ACCESS[a[1]!], type, ...(fields ? { fields: fields[1]!.split(',').map((f) => f.trim()) } : {}) });
  }
  return { module: m[1]!, entries };
}

const STEP_FIELDS = ['n', 'pos0'];   // shaders/lib/step.wgsl

function entryProblem(e: HeaderEntry, name: string, b: Binding): string | null {
  if (e.name !== name) return `entry ${e.name} where the module declares ${name}`;
  if (e.access !== b.access) return `${name}: ${e.access}, declared ${b.access}`;
  if (e.type !== b.type) return `${name}: type ${e.type}, declared ${b.type}`;
  const fields = b.access === 'uniform' ? (b.fields ?? (b.type === 'Step' ? STEP_FIELDS : undefined)) : undefined;
  if (e.fields && fields && e.fields.join(',') !== fields.join(',')) return `${name}: fields {${e.fields.join(', ')}}, declared {${fields.join(', ')}}`;
  return null;
}

/** What is wrong with `entries` as kernel k's whole binding list ("(weights)" standing for one or more). */
export function wholeProblem(entries: HeaderEntry[], k: Kernel): string | null {
  const w = entries.findIndex((e) => e.name === '(weights)');
  const before = w < 0 ? entries : entries.slice(0, w);
  const after = w < 0 ? [] : entries.slice(w + 1);
  const names = k.names;
  if (w < 0 ? names.length !== entries.length : names.length < before.length + after.length + 1) {
    return `${entries.length} entries (${entries.map((e) => e.name).join(', ')}) for ${names.length} bindings (${names.join(', ')})`;
  }
  const pairs: [HeaderEntry, string][] = [
    ...before.map((e, i): [HeaderEntry, string] => [e, names[i]!]),
    ...after.map((e, i): [HeaderEntry, string] => [e, names[names.length - after.length + i]!]),
  ];
  for (const [e, name] of pairs) {
    const p = entryProblem(e, name, k.bindings[name]!);
    if (p) return p;
  }
  return null;
}

/** What is wrong with `entries` as a run of consecutive bindings of kernel k (a library's block). */
export function runProblem(entries: HeaderEntry[], k: Kernel): string | null {
  const start = k.names.indexOf(entries[0]?.name ?? '');
  if (start < 0) return `${k.name} has no binding ${entries[0]?.name}`;
  for (const [i, e] of entries.entries()) {
    const name = k.names[start + i];
    if (name === undefined) return `${k.name} has no binding after ${k.names[start + i - 1]}`;
    const p = entryProblem(e, name, k.bindings[name]!);
    if (p) return p;
  }
  return null;
}

const files = wgslFiles(path.join(root, 'shaders')).map((p) => ({ file: path.relative(root, p), text: readFileSync(p, 'utf8') }));
const withHeaders = files.flatMap(({ file, text }) => {
  const header = parseHeader(text);
  return header ? [{ file, text, header }] : [];
});

describe('shader binding headers', () => {
  it('are found in most kernel files', () => {
    expect(withHeaders.length).toBeGreaterThan(20);
  });

  it.each(withHeaders.map((h) => [h.file, h] as const))('%s: matches its module', (_file, { text, header }) => {
    const owners = exported.filter(([, ks]) => ks.some((k) => k.source === text || k.libs?.includes(text)));
    expect(owners.length, 'a kernel module builds on this file').toBeGreaterThan(0);
    // the module that builds the kernels, or (a format library's weights) a module it builds them from
    const named = owners.find(([m]) => m === header.module)
      ?? owners.find(([m]) => readFileSync(path.join(root, m), 'utf8').includes(`from './${path.basename(header.module)}'`));
    const builtBy = owners.map(([m]) => m).join(' or ');
    expect(named !== undefined && existsSync(path.join(root, header.module)), `the header names ${header.module}; the kernels are built by ${builtBy}`).toBe(true);
    for (const k of named![1].filter((k) => k.source === text || k.libs?.includes(text))) {
      const problem = k.source === text ? wholeProblem(header.entries, k) : runProblem(header.entries, k);
      expect(problem, k.name).toBeNull();
    }
  });

  it('report a drifted entry (name, order, access, type, fields)', async () => {
    const { defineKernel, read, rw, STEP, uniformStruct } = await import('../../../src/gpu/kernel.ts');
    const k = defineKernel({ name: 't', source: '', bindings: { step: STEP, x: read('array<f32>'), y: rw('array<f32>'), p: uniformStruct('P', ['a', 'b']) } });
    const head = (body: string) => parseHeader(`// Bindings (declared in m.ts, which generates their WGSL):\n${body}\n// Dispatch: (1)`)!.entries;
    const good = '//   step uniform       Step { n, pos0 }\n//   x    storage, read array<f32> [n]\n//     more words\n//   y    storage, rw   array<f32> [n]\n//   p    uniform       P { a, b }';
    expect(wholeProblem(head(good), k)).toBeNull();
    expect(wholeProblem(head(good.replace('//   y ', '//   z ')), k)).toMatch(/z where the module declares y/);
    expect(wholeProblem(head(good.replace('storage, rw', 'storage, read')), k)).toMatch(/y: read, declared rw/);
    expect(wholeProblem(head(good.replace('array<f32> [n]\n//     more', 'array<vec4<f32>> [n]\n//     more')), k)).toMatch(/x: type array<vec4<f32>>/);
    expect(wholeProblem(head(good.replace('P { a, b }', 'P { b, a }')), k)).toMatch(/fields/);
    expect(wholeProblem(head(good.replace('Step { n, pos0 }', 'Step { n }')), k)).toMatch(/fields/);
    expect(wholeProblem(head(good.split('\n').slice(0, 3).join('\n')), k)).toMatch(/entries/);
    expect(wholeProblem(head(good.replace(/\/\/ {3}x.*\n\/\/ {5}more words\n/, '//   (weights) the format\'s\n')), k)).toBeNull();
    expect(runProblem(head('//   x    storage, read array<f32> [n]\n//   y    storage, rw   array<f32> [n]'), k)).toBeNull();
    expect(runProblem(head('//   y    storage, rw   array<f32> [n]\n//   x    storage, read array<f32> [n]'), k)).toMatch(/entry y where the module declares x|x where/);
  });
});
