// matmul_rows_q4: the MLC q4f16_1 weights of the SIMD-rasterizer prefill matmul (skeleton:
// shaders/lib/matmul_rows.wgsl). A block is 32 codes (one vec4<u32>, element k at bits (k%8)·4 of word
// k/8) and one f16 scale. A code is isolated in place with a mask (q·16^j for nibble j of a half word)
// and dequantized by one fma: q·16^j · (scale·16^−j) − 7·scale, a single rounding of (q − 7)·scale —
// exactly the reference's value.
//
// Bindings (declared in src/gpu/kernels/linear/matmul-rows-q4.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   qweight storage, read  array<vec4<u32>> [rows, k/32]
//   scales  storage, read  array<u32> f16 pairs of [rows, k/32]
//   x       storage, read  array<f32> [n, k]
//   y       storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk   uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

const PARTS: u32 = 4u;
const NIBBLE_MASK = vec4<u32>(0xfu, 0xf0u, 0xf00u, 0xf000u);
const NIBBLE_SCALE = vec4<f32>(1.0, 1.0 / 16.0, 1.0 / 256.0, 1.0 / 4096.0);

struct WRaw {
  q: vec4<u32>,
  scale: f32,
}

fn w_raw(row: u32, blk: u32) -> WRaw {
  let i = row * (chunk.k / 32u) + blk;
  let pair = unpack_f16x2(scales[i >> 1u]);
  return WRaw(qweight[i], select(pair.x, pair.y, (i & 1u) == 1u));
}

fn w_decode(raw: WRaw, part: u32) -> array<vec4<f32>, 2> {
  let word = raw.q[part];
  let s = raw.scale * NIBBLE_SCALE;
  let o = vec4<f32>(-7.0 * raw.scale);
  return array<vec4<f32>, 2>(
    fma(vec4<f32>(vec4<u32>(word) & NIBBLE_MASK), s, o),
    fma(vec4<f32>(vec4<u32>(word >> 16u) & NIBBLE_MASK), s, o),
  );
}
