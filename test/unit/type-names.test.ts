// One name, one definition: the types, interfaces, classes and enums exported by the layers that meet at
// the generate boundary (gpu, cpu, model, room, agent, preview) are listed with the TypeScript parser, and a
// name exported from two files fails, naming both. (A second FinishReason or ParsedCall would be caught.)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const LAYERS = ['src/gpu', 'src/cpu', 'src/model', 'src/room', 'src/agent', 'src/preview'];

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return tsFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** Exported type-level declarations of one file: interfaces, type aliases, classes, enums. */
function exportedTypeNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((s) => {
    const declares = ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s) || ts.isClassDeclaration(s) || ts.isEnumDeclaration(s);
    const exported = ts.canHaveModifiers(s) && ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    return declares && exported && s.name ? [s.name.text] : [];
  });
}

test('no type name is exported by two files of src/gpu, src/model, src/room, src/agent and src/preview', () => {
  const where = new Map<string, string[]>();
  for (const file of LAYERS.flatMap(tsFiles)) {
    for (const name of exportedTypeNames(file)) where.set(name, [...(where.get(name) ?? []), file]);
  }
  // The listing itself works: names each layer is known to export are found where they are defined.
  expect(where.get('GenerateOptions')).toEqual(['src/model/generate-types.ts']);
  expect(where.get('BackendRequest')).toEqual(['src/agent/backend.ts']);
  expect(where.get('RoomEngine')).toEqual(['src/room/room-engine.ts']);
  expect(where.size).toBeGreaterThan(150);
  const clashes = [...where].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(', ')}`);
  expect(clashes).toEqual([]);
});
