// q4f16_1: the block decode of an MLC q4f16_1 weight (the interface every format gives,
// docs/kernels.md "Weight formats"). A block is 32 codes (one vec4<u32>, element k at bits (k%8)·4 of
// word k/8, low nibble first) and one f16 scale; w = (q − 7)·scale (PARTS = 4). A code is isolated in place
// with a mask (q·16^j for nibble j of a half word) and dequantized by one fma: q·16^j · (scale·16^−j) −
// 7·scale, a single rounding of (q − 7)·scale — exactly the reference's value.
//
// Bindings (declared in src/gpu/kernels/linear/formats.ts, which generates their WGSL):
//   qweight storage, read  array<vec4<u32>> [rows, k/32]: one block per vec4
//   scales  storage, read  array<u32> f16 pairs of [rows, k/32]

const NIBBLE_MASK = vec4<u32>(0xfu, 0xf0u, 0xf00u, 0xf000u);
const NIBBLE_SCALE = vec4<f32>(1.0, 1.0 / 16.0, 1.0 / 256.0, 1.0 / 4096.0);

struct WRaw {
  q: vec4<u32>,
  scale: f32,
}

fn w_raw(row: u32, blk: u32, k: u32) -> WRaw {
  let i = row * (k / 32u) + blk;
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
