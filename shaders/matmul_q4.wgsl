// matmul_q4: the MLC q4f16_1 weight tile of the prefill matmul (skeleton: shaders/lib/matmul_tiles.wgsl).
// A row's 32 columns of a k block are one vec4<u32> of codes (element k at bits (k%8)·4 of word k/8) and
// one f16 scale, dequantized exactly as the reference does: w = (q − 7)·scale in f32.
//
// Bindings (declared in src/gpu/kernels/linear/matmul-q4.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   qweight storage, read  array<vec4<u32>> [rows, k/32]
//   scales  storage, read  array<u32> f16 pairs of [rows, k/32]
//   x       storage, read  array<f32> [n, k]
//   y       storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk   uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

fn load_w(wrow: u32, kb: u32, i: u32) {
  let bi = wrow * (chunk.k / 32u) + kb;
  let q = qweight[bi];
  let pair = unpack_f16x2(scales[bi >> 1u]);
  let scale = select(pair.x, pair.y, (bi & 1u) == 1u);
  for (var w = 0u; w < 4u; w++) {
    let word = q[w];
    for (var j = 0u; j < 8u; j++) {
      ws[(w * 8u + j) * BN + i] = (f32((word >> (4u * j)) & 0xfu) - 7.0) * scale;
    }
  }
}
