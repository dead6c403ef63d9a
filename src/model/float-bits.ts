// bf16 / f16 <-> f32 bit conversions (bit exact, round-to-nearest-even), on their own so the ggml block
// decoders (formats/gguf/ggml-dequant.ts) and ./tensor-utils.ts, which dispatches to them, share them
// without importing each other. Browser-safe; the f16 table is built on first use.

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE f32 bits of a number (after rounding it to f32). */
export function f32ToBits(x: number): number {
  f32Scratch[0] = x;
  return u32Scratch[0]!;
}

export function bitsToF32(bits: number): number {
  u32Scratch[0] = bits >>> 0;
  return f32Scratch[0]!;
}

/** f32 -> f16 bits, round to nearest even; overflow -> ±Inf; NaN stays NaN (quiet). */
export function f32ToF16Bits(x: number): number {
  const bits = f32ToBits(x);
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;                 // biased f16 exponent
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {                             // f16 subnormal (or zero after rounding)
    if (e < -10) return sign;
    mant |= 0x800000;                       // implicit leading 1, 24 significant bits
    const shift = 14 - e;                   // 14..24
    const half = 2 ** (shift - 1);
    let r = Math.floor(mant / 2 ** shift);
    const rem = mant - r * 2 ** shift;
    if (rem > half || (rem === half && (r & 1) === 1)) r++;
    return sign | r;                        // r = 0x400 carries into the smallest normal: correct
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (r & 1) === 1)) r++;  // a carry into exp 0x1f is +Inf: correct
  return sign | r;
}

let f16Table: Float32Array | undefined;

function buildF16Table(): Float32Array {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) t[h] = sign * mant * 2 ** -24;
    else if (exp === 0x1f) t[h] = mant ? NaN : sign * Infinity;
    else t[h] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return t;
}

/** The 65,536 f16 values by bit pattern (built once), for decoding whole tensors. */
export function f16ToF32Table(): Float32Array {
  f16Table ??= buildF16Table();
  return f16Table;
}

/** f16 bits -> number (exact). */
export function f16BitsToF32(h: number): number {
  f16Table ??= buildF16Table();
  return f16Table[h & 0xffff]!;
}

/** Round a number to the nearest f16 value (ties to even). */
export function roundToF16(x: number): number {
  return f16BitsToF32(f32ToF16Bits(x));
}

/** f32 -> bf16 bits, round to nearest even; NaN stays NaN (quiet). */
export function f32ToBf16Bits(x: number): number {
  const bits = f32ToBits(x);
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

export function bf16BitsToF32(h: number): number {
  return bitsToF32((h & 0xffff) << 16);
}

