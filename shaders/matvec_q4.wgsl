// matvec_q4: the MLC q4f16_1 block of the decode matvec (skeleton: shaders/lib/matvec_rows.wgsl).
// A block is 32 weights of one row: 4 words of 8 nibbles (element k at bits (k%8)·4 of word k/8, low
// nibble first) loaded as one vec4<u32>, and one f16 scale; w = (q − 7)·scale. The block's dot product
// is scale·(Σ q·x − 7·Σ x): the offset folds into the x block's sum (computed once for all rows) and the
// scale is applied once per block.
//
// Bindings (declared in src/gpu/kernels/linear/matvec-q4.ts, which generates their WGSL):
//   step    uniform        Step (unused: decode is one token)
//   qweight storage, read  array<vec4<u32>> [rows, k/32]: one block per vec4
//   scales  storage, read  array<u32> f16 pairs of [rows, k/32]
//   x       storage, read  array<vec4<f32>> [k/4]
//   y       storage, rw    array<f32> [out_stride]; this chunk writes columns row_offset + r
//   chunk   uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

const BLOCK_K: u32 = 32u;

// Codes are isolated in place with a mask (q·16^j for nibble j of a half word) instead of shifted down,
// so x is scaled by 16^−j instead, once per block for all rows (powers of two: exact).
const NIBBLE_MASK = vec4<u32>(0xfu, 0xf0u, 0xf00u, 0xf000u);
const NIBBLE_SCALE = vec4<f32>(1.0, 1.0 / 16.0, 1.0 / 256.0, 1.0 / 4096.0);

struct XBlock {
  v: array<vec4<f32>, 8>,        // x[4i .. 4i + 3] · NIBBLE_SCALE
  sum: f32,                      // Σ x over the block
}

fn load_x(blk: u32) -> XBlock {
  var xb: XBlock;
  var s = vec4<f32>(0.0);
  for (var i = 0u; i < 8u; i++) {
    let v = x[x_at + blk * 8u + i];
    s += v;
    xb.v[i] = v * NIBBLE_SCALE;
  }
  xb.sum = (s.x + s.y) + (s.z + s.w);
  return xb;
}

// Σ q·x over a word's 8 codes against the scaled x of elements 8i .. 8i + 7.
fn word_dot(w: u32, lo: vec4<f32>, hi: vec4<f32>) -> f32 {
  let a = vec4<f32>(vec4<u32>(w) & NIBBLE_MASK);
  let b = vec4<f32>(vec4<u32>(w >> 16u) & NIBBLE_MASK);
  return dot(a, lo) + dot(b, hi);
}

fn block_dot(row: u32, blk: u32, xb: XBlock) -> f32 {
  let i = row * (chunk.k / 32u) + blk;
  let q = qweight[i];
  let pair = unpack_f16x2(scales[i >> 1u]);
  let scale = select(pair.x, pair.y, (i & 1u) == 1u);
  let d = (word_dot(q.x, xb.v[0], xb.v[1]) + word_dot(q.y, xb.v[2], xb.v[3]))
        + (word_dot(q.z, xb.v[4], xb.v[5]) + word_dot(q.w, xb.v[6], xb.v[7]));
  return scale * (d - 7.0 * xb.sum);
}
