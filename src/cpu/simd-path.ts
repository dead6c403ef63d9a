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
 * The path `asked` resolves to here (the page's ?simd=, which travels with each request): 'auto' →
 * relaxed where supported; 'relaxed' where unsupported throws (a forced path never silently becomes another); 'plain' always works.
 */
export function pickSimdPath(asked: SimdChoice = 'auto'): SimdPath {
  if (asked === 'plain') return 'plain';
  if (relaxedSimdSupported()) return 'relaxed';
  if (asked === 'relaxed') throw new Error('relaxed SIMD was asked for, but this WebAssembly engine does not validate relaxed-SIMD code (use simd: plain)');
  return 'plain';
}

export function isSimdChoice(s: string): s is SimdChoice {
  return (SIMD_CHOICES as readonly string[]).includes(s);
}

// Which activations a WASM engine uses (the page's ?cpu-activations=, which travels with each load
// request beside ?simd=: src/cpu/engine-row.ts): 'f32' (the default: weights decoded exactly, the
// tokens every engine of a room agrees on) or 'q8'
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
