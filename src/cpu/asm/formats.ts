// Weight format codes shared with the JS side (src/cpu/formats.ts keeps the same numbers).
// AssemblyScript, compiled by src/cpu/build/compile-kernels.ts; not part of the app's tsconfig.
export const F32: i32 = 0;
export const F16: i32 = 1;
export const BF16: i32 = 2;
export const Q8_0: i32 = 3;
export const Q4_0: i32 = 4;
export const Q4_1: i32 = 5;
export const Q5_0: i32 = 6;
export const Q5_1: i32 = 7;
export const Q4_K: i32 = 8;
export const Q5_K: i32 = 9;
export const Q6_K: i32 = 10;
export const MLC_Q4: i32 = 11;   // MLC q4f16_1: words u32 [N, K/8] + scales f16 [N, K/32]
