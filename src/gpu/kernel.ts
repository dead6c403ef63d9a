// The kernel contract. A kernel is its WGSL file (shaders/<name>.wgsl, the code) plus one TypeScript
// module (src/gpu/kernels/<family>/<name>.ts) that declares, once, everything the host must agree on with it:
//   - its bindings (group 0, in declaration order) with their WGSL types; the WGSL declarations are
//     generated from this list and prepended, so a kernel file uses the names without declaring them;
//   - its small uniforms (structs of u32 fields), generated the same way and written by `uniformBuffer`;
//   - its override constants, workgroup grid and an op builder taking buffers by binding name.
// The idea is ratchet's register_bindings: one declaration, no binding index written twice.
import decodeF16 from '../../shaders/lib/decode_f16.wgsl?raw';
import decodeF32 from '../../shaders/lib/decode_f32.wgsl?raw';
import reduceShared from '../../shaders/lib/reduce_shared.wgsl?raw';
import reduceSubgroup from '../../shaders/lib/reduce_subgroup.wgsl?raw';
import step from '../../shaders/lib/step.wgsl?raw';

/** A binding: a uniform struct, or a storage array read-only ('read') or read-write ('rw'). */
export type Binding =
  | { access: 'uniform'; type: string; fields?: readonly string[] }
  | { access: 'read' | 'rw'; type: string };

export type Bindings = Record<string, Binding>;

/** The engine's per-step uniform, shared by every kernel: struct Step { n, pos0 } (shaders/lib/step.wgsl). */
export const STEP: Binding = { access: 'uniform', type: 'Step' };

/** A uniform struct of u32 fields declared here and generated into the kernel's WGSL. */
export function uniformStruct(type: string, fields: readonly string[]): Binding {
  return { access: 'uniform', type, fields };
}

export const read = (type: string): Binding => ({ access: 'read', type });
export const rw = (type: string): Binding => ({ access: 'rw', type });

export interface KernelDef<B extends Bindings> {
  name: string;
  source: string;              // the .wgsl file's text
  bindings: B;                 // binding i = the i-th key
  /** Named u32 constants shared with the host (e.g. epilogue codes), generated as WGSL `const`s. */
  constants?: Record<string, number>;
  /** Shared WGSL (shaders/lib) this kernel's code builds on, placed before it. */
  libs?: readonly string[];
  /** The kernel calls reduce_rows: its module comes in a subgroup and a workgroup-memory variant. */
  reduces?: boolean;
  /**
   * Shared WGSL that comes in a subgroup variant and a fallback without subgroups (the module comes in
   * both, as for `reduces`): e.g. the prefill matmul's x loads shared by subgroupBroadcast or not.
   */
  subgroupLibs?: { subgroups: readonly string[]; fallback: readonly string[] };
  /**
   * One of a family of kernels sharing this source (a structure file composed with different libs, e.g.
   * matvec with each weight format): the family's name. Kernels without it own their source alone.
   */
  family?: string;
}

export interface Kernel<B extends Bindings = Bindings> extends KernelDef<B> {
  names: readonly string[];    // binding names in binding order
}

/** Buffers for every binding of a kernel, by name. */
export type BufferSet<B extends Bindings> = { [K in keyof B]: GPUBuffer };

export function defineKernel<const B extends Bindings>(def: KernelDef<B>): Kernel<B> {
  return { ...def, names: Object.keys(def.bindings) };
}

/** The kernel's module comes in a subgroup variant and one without (it reduces, or has subgroupLibs). */
export function hasSubgroupVariant(k: KernelDef<Bindings>): boolean {
  return Boolean(k.reduces || k.subgroupLibs);
}

/** Text variants of a module: native f16 or not; for kernels with a subgroup variant, that or its fallback. */
export interface ModuleVariant {
  useF16: boolean;
  subgroups?: boolean;
}

function declarations(k: Kernel): string {
  const lines = Object.entries(k.constants ?? {}).map(([name, v]) => `const ${name}: u32 = ${v}u;`);
  k.names.forEach((name, i) => {
    const b = k.bindings[name]!;
    if (b.access === 'uniform' && b.fields) {
      lines.push(`struct ${b.type} { ${b.fields.map((f) => `${f}: u32`).join(', ')} }`);
    }
    const space = b.access === 'uniform' ? 'uniform' : b.access === 'read' ? 'storage, read' : 'storage, read_write';
    lines.push(`@group(0) @binding(${i}) var<${space}> ${name}: ${b.type};`);
  });
  return lines.join('\n');
}

/**
 * The WGSL module text for a kernel: the `enable` directives of the variant, the packed-number helpers
 * of the chosen path (shaders/lib/decode_f16 or decode_f32), struct Step, the generated declarations,
 * the kernel's libraries, its subgroup-variant libraries and reduction (when it has them), then the kernel file.
 */
export function kernelModuleSource(k: Kernel, v: ModuleVariant): string {
  const subgroups = hasSubgroupVariant(k) && Boolean(v.subgroups);
  const directives = [v.useF16 ? 'enable f16;' : '', subgroups ? 'enable subgroups;' : ''].filter(Boolean);
  const reduce = k.reduces ? [subgroups ? reduceSubgroup : reduceShared] : [];
  const variant = k.subgroupLibs ? (subgroups ? k.subgroupLibs.subgroups : k.subgroupLibs.fallback) : [];
  return [
    ...directives, v.useF16 ? decodeF16 : decodeF32, step, `// bindings of ${k.name} (src/gpu/kernels)`, declarations(k),
    ...(k.libs ?? []), ...variant, ...reduce, k.source,
  ].join('\n');
}

/** The words of a uniform struct declared with fields, in declaration order, padded to 16 bytes. */
export function uniformWords(binding: Binding, values: Record<string, number>): Uint32Array {
  if (binding.access !== 'uniform' || !binding.fields) throw new Error(`${binding.type}: not a uniform struct declared with fields`);
  const words = new Uint32Array(Math.max(4, Math.ceil(binding.fields.length / 4) * 4));
  binding.fields.forEach((f, i) => {
    const v = values[f];
    if (v === undefined) throw new Error(`${binding.type}: no value for field ${f}`);
    words[i] = v;
  });
  return words;
}

/** A small uniform buffer for `binding` of a kernel (a chunk's shape), written once at load. */
export function uniformBuffer(device: GPUDevice, binding: Binding, values: Record<string, number>): GPUBuffer {
  const words = uniformWords(binding, values);
  const size = words.byteLength;
  const buffer = device.createBuffer({ label: binding.type, size, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
  new Uint32Array(buffer.getMappedRange()).set(words);
  buffer.unmap();
  return buffer;
}

/** Spread `count` workgroups over x (≤ 65535) and y. Kernels recover the index as y·nx + x. */
export function grid2d(count: number): [number, number] {
  const x = Math.max(1, Math.min(count, 65535));
  return [x, Math.max(1, Math.ceil(count / x))];
}
