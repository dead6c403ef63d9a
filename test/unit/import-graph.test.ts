// The import graph of src/ and workers/, read with the TypeScript parser (import and export-from
// statements of every .ts file, type-only ones included, and every import() with a literal path,
// relative paths resolved), so two rules stay true: no module of the engines (src/gpu, src/model,
// workers/) imports itself through a circle, and imports point the way README's "What is where" says
// (src/gpu → src/model ← src/room; the room, the app and the UI reach an engine only through its row in
// the table, src/engines; workers/ above src/gpu, never imported by src/). A lazy import() counts: it
// still ties one area to another.
// The circle finder is checked on small synthetic graphs first, so a passing run means something.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ROOTS = ['src', 'workers'];

type Graph = Map<string, string[]>;

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return tsFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/**
 * The module specifiers of a file's import and export-from statements (side-effect imports too) and of
 * its import() calls with a literal argument, anywhere in the file (an import() of a variable is not read).
 */
export function importSpecifiers(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const s of source.statements) {
    if ((ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier)) {
      out.push(s.moduleSpecifier.text);
    }
  }
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = n.arguments[0];
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) out.push(arg.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

/** A relative specifier of `from` as a repository path of a .ts file; undefined for packages and non-.ts files. */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const bare = spec.replace(/\?.*$/, '');
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), bare));
  for (const candidate of [target, `${target}.ts`, `${target}/index.ts`]) {
    if (candidate.endsWith('.ts') && existsSync(path.join(ROOT, candidate))) return candidate;
  }
  if (bare.endsWith('.ts')) throw new Error(`${from}: import "${spec}" resolves to ${target}, which does not exist`);
  return undefined;   // ?raw shaders, JSON, …
}

function readGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of ROOTS.flatMap(tsFiles)) {
    const specs = importSpecifiers(file, readFileSync(path.join(ROOT, file), 'utf8'));
    graph.set(file, [...new Set(specs.flatMap((s) => resolve(file, s) ?? []))]);
  }
  return graph;
}

/** Every circle of the graph as its strongly connected component (Tarjan), members sorted; self-imports too. */
export function circles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do { w = stack.pop()!; onStack.delete(w); component.push(w); } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** Which area a file is in, for the direction rules: the first two path parts ("src/gpu", "workers/x.ts" → "workers"). */
function area(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'src' ? `src/${parts[1]}` : parts[0]!;
}

/** Imports `file → target` that cross from one area into another the rules do not allow. */
function forbidden(graph: Graph, rules: Record<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const from = area(file);
    const allowed = rules[from];
    if (!allowed) continue;
    for (const t of targets) {
      const to = area(t);
      if (to !== from && !allowed.includes(to) && !allowed.includes(t)) out.push(`${file} → ${t}`);
    }
  }
  return out.sort();
}

// What each area may import besides itself (README "What is where"). The engine rows' contract
// (src/engines/contract.ts) and the in-thread share loader are what every side shares; the table
// (src/engines/table.ts) imports each engine's row. src/room asks src/gpu's adapter summary only (a
// device's caps) and is handed the table; src/app hands it over and reaches engines only through it;
// src/ui is on top, beside src/app, and likewise never reaches into an engine (bar the adapter summary
// the start screen shows).
const ENGINE_SHARED = ['src/engines/contract.ts', 'src/engines/in-thread-share.ts'];
const ABOVE_ENGINES = ['src/model', 'src/room', 'src/engines', 'src/agent', 'src/preview', 'src/api'];
const DIRECTIONS: Record<string, readonly string[]> = {
  'src/model': [...ENGINE_SHARED],
  'src/gpu': ['src/model', ...ENGINE_SHARED],
  'src/cpu': ['src/model', ...ENGINE_SHARED],
  'src/engines': ['src/model', 'src/gpu/engine-row.ts', 'src/cpu/engine-row.ts'],
  'src/room': ['src/model', 'src/gpu/adapter.ts', ...ENGINE_SHARED],
  // the host tab's side of the OpenAI-compatible endpoint: requests through the agent's path
  'src/api': ['src/model', 'src/agent'],
  'src/app': ABOVE_ENGINES,
  'src/ui': [...ABOVE_ENGINES, 'src/app', 'src/gpu/adapter.ts'],
  // the one engine worker makes its engine from the table's row and reads weights through the device's
  // byte cache (a leaf of src/room)
  workers: ['src/engines/table.ts', ...ENGINE_SHARED, 'src/model', 'src/room/weight-cache.ts'],
};

describe('the circle finder and the parser (synthetic inputs)', () => {
  it('finds a three-file circle and a self-import, and nothing in a graph without one', () => {
    const withCircle: Graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []], ['e', ['a', 'e']]]);
    expect(circles(withCircle)).toEqual([['a', 'b', 'c'], ['e']]);
    const tree: Graph = new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []], ['d', ['a']]]);
    expect(circles(tree)).toEqual([]);
  });

  it('reads multi-line, type-only, side-effect and export-from statements, and not commented-out ones', () => {
    const text = [
      "import {\n  a,\n  type B,\n} from './a.ts';",
      "import type { C } from '../c.ts';",
      "import './side-effect.ts';",
      "export { d } from './d.ts';",
      "export type * from './e.ts';",
      "// import { x } from './commented.ts';",
      "/* import { y } from './block.ts'; */",
      "const z = 'import { w } from \"./string.ts\"';",
      "async function f() { const { g } = await import('./lazy.ts'); return import(`./template.ts`); }",
      "const h = (p: string) => import(p);",
    ].join('\n');
    expect(importSpecifiers('x.ts', text)).toEqual(['./a.ts', '../c.ts', './side-effect.ts', './d.ts', './e.ts', './lazy.ts', './template.ts']);
  });

  it('reports an import against the directions', () => {
    const g: Graph = new Map([['src/model/a.ts', ['src/gpu/b.ts']], ['src/gpu/b.ts', ['src/model/c.ts']], ['src/room/r.ts', ['src/gpu/adapter.ts', 'src/gpu/engine.ts']]]);
    expect(forbidden(g, DIRECTIONS)).toEqual(['src/model/a.ts → src/gpu/b.ts', 'src/room/r.ts → src/gpu/engine.ts']);
    const above: Graph = new Map([
      ['src/room/api.ts', ['src/engines/contract.ts', 'src/engines/table.ts', 'src/cpu/engine-row.ts']],
      ['src/app/a.ts', ['src/engines/table.ts', 'src/room/api.ts', 'src/cpu/simd-path.ts']],
      ['src/ui/u.ts', ['src/app/a.ts', 'src/gpu/adapter.ts', 'src/gpu/engine.ts']],
    ]);
    expect(forbidden(above, DIRECTIONS)).toEqual([
      'src/app/a.ts → src/cpu/simd-path.ts', 'src/room/api.ts → src/cpu/engine-row.ts', 'src/room/api.ts → src/engines/table.ts', 'src/ui/u.ts → src/gpu/engine.ts',
    ]);
  });
});

describe('the import graph of src/ and workers/', () => {
  const graph = readGraph();

  it('is read: every area has files and the engines import their layer tables', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/gpu/create-engine.ts')).toContain('src/gpu/layers.ts');
    expect(graph.get('src/cpu/create-engine.ts')).toContain('src/cpu/layers.ts');
    expect(graph.get('src/model/reference/reference-engine.ts')).toContain('src/model/reference/layer-table.ts');
    expect(graph.get('workers/engine.worker.ts')).toContain('src/engines/table.ts');
    // lazy import()s are read: each engine's row reaches its engine only that way
    expect(graph.get('src/gpu/engine-row.ts')).toContain('src/gpu/create-engine.ts');
    expect(graph.get('src/cpu/engine-row.ts')).toContain('src/cpu/create-engine.ts');
    expect(graph.get('src/engines/page-engines.ts')).toContain('src/engines/worker-share.ts');
  });

  it('has no circle through src/gpu, src/cpu, src/model (src/model/tiny included) or workers/', () => {
    const engines = (f: string) => f.startsWith('src/gpu/') || f.startsWith('src/cpu/') || f.startsWith('src/model/') || f.startsWith('workers/');
    expect(circles(graph).filter((c) => c.some(engines))).toEqual([]);
  });

  it('points the way README says: model imports no other layer, gpu only model, nothing in src/ imports workers/', () => {
    expect(forbidden(graph, DIRECTIONS)).toEqual([]);
    const intoWorkers = [...graph].flatMap(([f, ts]) => (f.startsWith('src/') ? ts.filter((t) => t.startsWith('workers/')).map((t) => `${f} → ${t}`) : []));
    expect(intoWorkers).toEqual([]);
  });
});
