// q4f16_1_dot: the MLC q4f16_1 block dot of the decode matvec (shaders/matvec.wgsl; on ./q4f16_1.wgsl,
// whose w_raw and nibble constants it uses). A block is 32 weights of one row: 4 words of 8 nibbles
// (element k at bits (k%8)·4 of word k/8, low nibble first) loaded as one vec4<u32>, and one f16
// scale; w = (q − 7)·scale. The block's dot product is scale·(Σ q·x − 7·Σ x): the offset folds into the
// x block's sum (computed once for all rows) and the scale is applied once per block.

const BLOCK_K: u32 = 32u;

// Codes are isolated in place with a mask (q·16^j for nibble j of a half word: NIBBLE_MASK) instead of
// shifted down, so x is scaled by 16^−j instead (NIBBLE_SCALE), once per block for all rows (powers of
// two: exact).

struct XBlock {
  v: array<vec4<f32>, 8>,        // x[4i .. 4i + 3] · NIBBLE_SCALE
  sum: f32,                      // Σ x over the block
}

fn load_x(blk: u32) -> XBlock {
  var xb: XBlock;
  var s = vec4<f32>(0.0);
  for (var i = 0u; i < 8u; i++) {
    let v = x_fold(x[x_at + blk * 8u + i], blk * 8u + i);   // shaders/lib/x_plain.wgsl or x_rmsnorm.wgsl
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
  let raw = w_raw(row, blk, chunk.k);
  let q = raw.q;
  let scale = raw.scale;
  let d = (word_dot(q.x, xb.v[0], xb.v[1]) + word_dot(q.y, xb.v[2], xb.v[3]))
        + (word_dot(q.z, xb.v[4], xb.v[5]) + word_dot(q.w, xb.v[6], xb.v[7]));
  return scale * (d - 7.0 * xb.sum);
}
