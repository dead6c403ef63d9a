// Which build of the WASM kernels a device runs: 'relaxed' (SIMD128 plus relaxed SIMD: fused
// multiply-adds in the f32 dots) where the engine validates relaxed-SIMD code, else 'plain' (SIMD128
// only). Shared by Node and the browser; needs no AssemblyScript runtime: a 37-byte module holding one
// f32x4.relaxed_madd is handed to WebAssembly.validate, which says whether this engine decodes the opcode.

export type SimdPath = 'relaxed' | 'plain';
/** What a caller asks for: 'auto' (relaxed where supported), or one path forced (?simd=plain). */
export type SimdChoice = 'auto' | SimdPath;

export const SIMD_CHOICES: readonly SimdChoice[] = ['auto', 'relaxed', 'plain'];

/**
 * (module (func (param v128 v128 v128) (result v128)
 *   local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd))   ;; opcode 0xfd 0x105 (LEB128 85 02)
 */
export const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,                 // \0asm, version 1
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,     // type: (v128 v128 v128) -> v128
  0x03, 0x02, 0x01, 0x00,                                         // function 0 has type 0
  0x0a, 0x0d, 0x01, 0x0b, 0x00,                                   // code: one body of 11 bytes, no locals
  0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,     // local.get ×3, f32x4.relaxed_madd, end
]);

let supported: boolean | undefined;
/** The page's ?simd= (src/app sets it once at start): what 'auto' means here. */
let preference: SimdChoice = 'auto';

/** Sets what an 'auto' request resolves as on this page (?simd=plain forces the SIMD128-only build). */
export function preferSimdPath(choice: SimdChoice): void {
  preference = choice;
}

/** This page's preference, for an engine that runs in another global (its worker). */
export function simdPreference(): SimdChoice {
  return preference;
}

/** Whether this WebAssembly engine has relaxed SIMD (validated once, then remembered). */
export function relaxedSimdSupported(): boolean {
  if (supported === undefined) {
    try {
      supported = typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_SIMD_PROBE as Uint8Array<ArrayBuffer>);
    } catch {
      supported = false;
    }
  }
  return supported;
}

/** Forgets the remembered answer (Node turns the feature on at run time: ./kernel-binary.ts). */
export function recheckRelaxedSimd(): void {
  supported = undefined;
}

/**
 * The path `asked` resolves to here: 'auto' → the page's preference (preferSimdPath), itself 'auto'
 * unless ?simd= said otherwise → relaxed where supported; 'relaxed' where unsupported
 * throws (a forced path never silently becomes another); 'plain' always works.
 */
export function pickSimdPath(asked: SimdChoice = 'auto'): SimdPath {
  const choice = asked === 'auto' ? preference : asked;
  if (choice === 'plain') return 'plain';
  if (relaxedSimdSupported()) return 'relaxed';
  if (choice === 'relaxed') throw new Error('relaxed SIMD was asked for, but this WebAssembly engine does not validate relaxed-SIMD code (use simd: plain)');
  return 'plain';
}

export function isSimdChoice(s: string): s is SimdChoice {
  return (SIMD_CHOICES as readonly string[]).includes(s);
}

// Which activations this page's WASM engines use (the page's ?cpu-activations=, src/app sets it once at
// start, beside ?simd=: the page's two WASM choices live in one module, so they load as one chunk):
// 'f32' (the default: weights decoded exactly, the tokens every engine of a room agrees on) or 'q8'
// (each linear's input quantized per 32 values, integer dot products: about 1.5-3x faster on the CPU,
// but the tokens can differ from the other engines'; for a device that runs a model alone).

/**
 * How the linears treat their input. 'f32': x stays f32 and every weight is decoded to f32 (exact up to
 * f32 summation order: the path tested against the reference at the GPU tolerances). 'q8': x is
 * quantized per 32 values to i16 codes + an f32 scale once per call and Q8_0/Q4_0/Q4_K/Q6_K rows are
 * dotted in integers (src/cpu/asm/linear-q8.ts; llama.cpp's approach), other formats still run 'f32'.
 */
export type CpuActivations = 'f32' | 'q8';

export const CPU_ACTIVATIONS: readonly CpuActivations[] = ['f32', 'q8'];

export function isCpuActivations(v: string): v is CpuActivations {
  return (CPU_ACTIVATIONS as readonly string[]).includes(v);
}

let activationsPreference: CpuActivations = 'f32';

/** Sets what this page's WASM engines use (their workers get it with each load request). */
export function preferCpuActivations(a: CpuActivations): void {
  activationsPreference = a;
}

export function cpuActivationsPreference(): CpuActivations {
  return activationsPreference;
}
