// Activations quantized per 32-block for the integer linears (./linear-q8.ts), once per linear call.
// Layout at xq for n tokens of K values (K a multiple of 32, B = K / 32 blocks a token):
//   q  i16 [n, K]   round-to-nearest-even(x / d), in −127..127 (kept as i16 so the inner loop loads
//                   them straight into i32x4.dot_i16x8_s; weights are widened once per block instead)
//   d  f32 [⌈n/4⌉, B, 4]  amax(|x| of the block) / 127 (0 for an all-zero block, whose q are then 0);
//                   token t's block b at ((t >> 2)·B + b)·4 + (t & 3): the 4 tokens of a prefill tile
//                   side by side, so one v128 load gives a block's scales for the whole tile
//   s  f32 [⌈n/4⌉, B, 4]  d · Σ q of the block (the min term of Q4_K's d·sc·q − dmin·m), laid out as d
//   c  i8  [n, K]   the same codes as i8: the relaxed-SIMD build's 4-bit linears take them straight into
//                   i32x4.relaxed_dot_i8x16_i7x16_add_s (16 products an instruction, the nibbles 0..15 as
//                   its 7-bit operand, so the result is exact and the same on every CPU)
//   Σ  i32 [⌈n/4⌉, B, 4]  Σ q of the block as an integer, laid out as d (Q4_0's −8 offset:
//                   Σ qx·(nib − 8) = Σ qx·nib − 8·Σ qx, one v128 for a prefill tile's 4 tokens)
//   r  [n] records of B·12 bytes, token by token: d f32 [B], s f32 [B], Σ i32 [B] again, a token's
//                   blocks side by side (a one-token row takes four consecutive blocks' in one load each,
//                   where the tiled arrays put them 16 bytes apart)
// Like llama.cpp's Q8_0 activations (quantize_row_q8_0) but with an f32 scale, and per 32 values also
// for the K-quants (llama.cpp's q8_K has one scale per 256): finer, and one layout for every format.

/** Bytes of the quantized activations of n tokens of K values. */
export function q8Bytes(n: i32, K: i32): i32 {
  return n * K * 2 + ((n + 3) >> 2) * (K >> 5) * 48 + n * K + n * (K >> 5) * 12;
}

/** Where the i8 codes (c) start, and after them the integer sums (Σ). */
@inline export function codesAt(xq: usize, n: i32, K: i32): usize {
  return xq + <usize>(n * K * 2 + ((n + 3) >> 2) * (K >> 5) * 32);
}
@inline export function sumsAt(xq: usize, n: i32, K: i32): usize {
  return codesAt(xq, n, K) + <usize>(n * K);
}

/** Token t's record (r): its d at + 4b, s at + 4(B + b), Σ at + 4(2B + b). */
@inline export function recordAt(xq: usize, n: i32, K: i32, t: i32): usize {
  return sumsAt(xq, n, K) + <usize>(((n + 3) >> 2) * (K >> 5) * 16) + <usize>(t * (K >> 5) * 12);
}

/** Byte offset of token t's block b in the d (or s) array. */
@inline export function scaleAt(t: i32, b: i32, B: i32): usize {
  return (<usize>((t >> 2) * B + b) << 4) + (<usize>(t & 3) << 2);
}

/** x [n, K] f32 quantized into the layout above at xq. */
export function quantizeQ8(x: usize, xq: usize, n: i32, K: i32): void {
  const B = K >> 5;
  const dAt = xq + (<usize>(n * K) << 1), sAt = dAt + (<usize>(((n + 3) >> 2) * B) << 4);
  const cAt = codesAt(xq, n, K), sumAt = sumsAt(xq, n, K);
  for (let t = 0; t < n; t++) {
    const rec = recordAt(xq, n, K, t);
    for (let b = 0; b < B; b++) {
      const i = t * B + b;
      const src = x + (<usize>(i << 5) << 2), dst = xq + (<usize>(i << 5) << 1);
      let m = f32x4.abs(v128.load(src));
      for (let j = 1; j < 8; j++) m = f32x4.max(m, f32x4.abs(v128.load(src + (<usize>j << 4))));
      const amax = max(max(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1)), max(f32x4.extract_lane(m, 2), f32x4.extract_lane(m, 3)));
      const d: f32 = amax / 127;
      const id = f32x4.splat(d != 0 ? <f32>1 / d : 0);
      let sum = i32x4.splat(0);
      for (let j = 0; j < 4; j++) {
        const a = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(src + (<usize>j << 5)), id)));
        const c = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(src + (<usize>j << 5) + 16), id)));
        sum = i32x4.add(sum, i32x4.add(a, c));
        v128.store(dst + (<usize>j << 4), i16x8.narrow_i32x4_s(a, c));
      }
      // the i8 codes: the i16 ones narrowed (|q| ≤ 127, so exact)
      const c8 = cAt + (<usize>i << 5);
      v128.store(c8, i8x16.narrow_i16x8_s(v128.load(dst), v128.load(dst + 16)));
      v128.store(c8 + 16, i8x16.narrow_i16x8_s(v128.load(dst + 32), v128.load(dst + 48)));
      const total = i32x4.extract_lane(sum, 0) + i32x4.extract_lane(sum, 1) + i32x4.extract_lane(sum, 2) + i32x4.extract_lane(sum, 3);
      store<i32>(sumAt + scaleAt(t, b, B), total);
      store<f32>(dAt + scaleAt(t, b, B), d);
      store<f32>(sAt + scaleAt(t, b, B), d * <f32>total);
      store<f32>(rec + (<usize>b << 2), d);
      store<f32>(rec + (<usize>(B + b) << 2), d * <f32>total);
      store<i32>(rec + (<usize>(2 * B + b) << 2), total);
    }
  }
}
