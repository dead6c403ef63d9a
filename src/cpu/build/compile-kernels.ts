// Node only (never in the app bundle): compiles the AssemblyScript kernels in ../asm/ with npm
// `assemblyscript`'s compiler API, into a cache keyed by a hash of the sources, the compiler's version
// and the flags, so a fresh clone compiles once (a few seconds) and later runs read the cached binary.
// Used by the Node engine path (../kernel-binary.ts), the tests, the CLIs and the Vite plugin
// (./vite-plugin.ts). No compiled .wasm is committed.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * simd: one thread, plain memory; threads: a shared memory several workers run the same kernels on.
 * The -relaxed twins add `--enable relaxed-simd` (ASC_FEATURE_RELAXED_SIMD is true in them, so the
 * kernels' `if (ASC_FEATURE_RELAXED_SIMD)` branches use f32x4.relaxed_madd …); a browser without relaxed
 * SIMD cannot even validate them, so ../simd-path.ts picks which one loads.
 */
export type KernelVariant = 'simd' | 'threads' | 'simd-relaxed' | 'threads-relaxed';

const ASM_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../asm');
const ROOT = path.resolve(ASM_DIR, '../../..');
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'pooled-cpu-kernels');

/** asc flags per variant: no runtime (JS owns the imported memory), no abort import, SIMD128. */
const FLAGS: Record<KernelVariant, string[]> = {
  simd: ['--runtime', 'stub', '--importMemory', '--use', 'abort=', '--noAssert', '-O3', '--enable', 'simd'],
  threads: ['--runtime', 'stub', '--importMemory', '--sharedMemory', '--maximumMemory', '65536', '--use', 'abort=', '--noAssert', '-O3', '--enable', 'simd', '--enable', 'threads'],
  'simd-relaxed': ['--runtime', 'stub', '--importMemory', '--use', 'abort=', '--noAssert', '-O3', '--enable', 'simd', '--enable', 'relaxed-simd'],
  'threads-relaxed': ['--runtime', 'stub', '--importMemory', '--sharedMemory', '--maximumMemory', '65536', '--use', 'abort=', '--noAssert', '-O3', '--enable', 'simd', '--enable', 'threads', '--enable', 'relaxed-simd'],
};

function sources(): { name: string; text: string }[] {
  return readdirSync(ASM_DIR).filter((f) => f.endsWith('.ts')).sort().map((name) => ({ name, text: readFileSync(path.join(ASM_DIR, name), 'utf8') }));
}

function compilerVersion(): string {
  const require = createRequire(import.meta.url);
  return (JSON.parse(readFileSync(require.resolve('assemblyscript/package.json'), 'utf8')) as { version: string }).version;
}

/** Where the cached binary of this variant and these sources lives. */
export function kernelCachePath(variant: KernelVariant = 'simd'): string {
  const h = createHash('sha256');
  h.update(compilerVersion()).update(FLAGS[variant].join(' '));
  for (const s of sources()) h.update(`\0${s.name}\0${s.text}`);
  return path.join(CACHE_DIR, `kernels-${variant}-${h.digest('hex').slice(0, 16)}.wasm`);
}

async function compile(variant: KernelVariant): Promise<Uint8Array> {
  const { default: asc } = await import('assemblyscript/asc');
  let binary: Uint8Array | undefined;
  const errors: string[] = [];
  const result = await asc.main([path.join(ASM_DIR, 'kernels.ts'), '--outFile', 'kernels.wasm', ...FLAGS[variant]], {
    writeFile: (name, contents) => { if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents; },
    stderr: { write: (s: string | Uint8Array) => { errors.push(String(s)); return true; } } as never,
    stdout: { write: () => true } as never,
  });
  if (result.error || !binary) throw new Error(`AssemblyScript kernels (${variant}) did not compile: ${result.error?.message ?? 'no binary'}\n${errors.join('')}`);
  return binary;
}

/** The compiled kernels of `variant`, from the cache or compiled now (and cached). */
export async function kernelBinary(variant: KernelVariant = 'simd'): Promise<Uint8Array> {
  const file = kernelCachePath(variant);
  if (existsSync(file)) return new Uint8Array(readFileSync(file));
  const binary = await compile(variant);
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, binary);
  renameSync(tmp, file);   // atomic: parallel test workers never read half a file
  return binary;
}
