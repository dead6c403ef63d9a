// The entry of the WASM kernels (AssemblyScript, compiled with SIMD128 by src/cpu/build/compile-kernels.ts).
// No AssemblyScript runtime: the memory is imported and JS (src/cpu/wasm-kernels.ts) places every
// buffer above heapBase(); every export takes byte addresses into that memory.
export { dequantRow, rowBytes } from './dequant';
export { linear } from './linear';
export { linearQ8, linearQ8Covers } from './linear-q8';
export { q8Bytes, quantizeQ8 } from './quantize';
export { addInPlace, attention, fromHalf, rmsnorm, rope, siluMul, toHalf } from './ops';
export { convSilu, deltaGates, gatedDeltaRule, gatedRmsNorm, l2normHeads, sigmoidGate } from './gated-delta';
export { attentionQ8_0, dequantQ8_0, quantizeQ8_0 } from './kv-q8';

/** First byte JS may use (after the module's static data). */
export function heapBase(): usize {
  return __heap_base;
}

/** 1 in the relaxed-SIMD build (ASC_FEATURE_RELAXED_SIMD), 0 in the plain SIMD128 one: the engine reports it. */
export function relaxedSimd(): i32 {
  return ASC_FEATURE_RELAXED_SIMD ? 1 : 0;
}
