// The kernel contract (src/gpu/kernel.ts): every shader is owned by exactly one kernel module (or one
// family of kernels composed from it, such as matvec_ggml with each block type), which declares its
// bindings once; the .wgsl files declare none themselves and the kernel's code uses every binding declared.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelModuleSource, type Kernel } from '../../../src/gpu/kernel.ts';

const modules = import.meta.glob('../../../src/gpu/kernels/**/*.ts', { eager: true }) as Record<string, Record<string, unknown>>;

function isKernel(v: unknown): v is Kernel {
  return typeof v === 'object' && v !== null && 'source' in v && 'bindings' in v && 'names' in v;
}

const kernels: Kernel[] = Object.values(modules).flatMap((m) => Object.values(m).flatMap((v) => (Array.isArray(v) ? v : [v])).filter(isKernel));
const shaderDir = path.resolve(import.meta.dirname, '../../../shaders');
const shaderFiles = readdirSync(shaderDir).filter((f) => f.endsWith('.wgsl'));

describe('kernel contract', () => {
  it('every shader file is the source of exactly one kernel module', () => {
    expect(shaderFiles.length).toBeGreaterThan(5);
    for (const file of shaderFiles) {
      const text = readFileSync(path.join(shaderDir, file), 'utf8');
      const owners = new Set(kernels.filter((k) => k.source === text).map((k) => k.family ?? k.name));
      expect([...owners], file).toHaveLength(1);
    }
    expect(new Set(kernels.map((k) => k.name)).size).toBe(kernels.length);
  });

  it.each(kernels.map((k) => [k.name, k] as const))('%s: bindings declared once (by its module) and all used', (_name, k) => {
    // each variant of a kernel with subgroup-variant libraries (with subgroups and its fallback) on its own
    const variants = k.subgroupLibs ? [k.subgroupLibs.fallback, k.subgroupLibs.subgroups] : [[]];
    for (const variant of variants) {
      const code = [...(k.libs ?? []), ...variant, k.source];
      for (const text of code) {
        expect(text).not.toMatch(/@binding\s*\(/);
        expect(text).not.toMatch(/\bstruct\s+Step\b/);
      }
      for (const name of k.names) expect(code.join('\n'), `binding ${name}`).toMatch(new RegExp(`\\b${name}\\b`));
    }
    const module = kernelModuleSource(k, { useF16: false });
    k.names.forEach((_name, i) => expect(module).toContain(`@binding(${i}) var`));
    if (k.subgroupLibs) {
      expect(module).not.toContain('enable subgroups;');
      expect(kernelModuleSource(k, { useF16: false, subgroups: true })).toMatch(/^enable subgroups;/);
    }
    for (const b of Object.values(k.bindings)) {
      if (b.access === 'uniform' && 'fields' in b && b.fields) {
        expect(k.source).not.toMatch(new RegExp(`\\bstruct\\s+${b.type}\\b`));
        expect(module.match(new RegExp(`\\bstruct\\s+${b.type}\\b`, 'g'))).toHaveLength(1);
      }
    }
  });
});
