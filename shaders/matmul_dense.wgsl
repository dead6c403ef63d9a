// matmul_dense: the dense F32 / F16 / BF16 weight tile of the prefill matmul (skeleton:
// shaders/lib/matmul_tiles.wgsl). A row is read in vec4<u32> blocks (4 F32 or 8 F16/BF16, rows padded
// with zeros to a whole vec4 at upload); blocks past the row's end are read as zeros.
//
// Bindings (declared in src/gpu/kernels/linear/matmul-dense.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   weight storage, read  array<vec4<u32>> [rows, ceil(k / per vec4)]
//   x      storage, read  array<f32> [n, k]
//   y      storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk  uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

override WDTYPE: u32;            // 0 F32, 1 F16, 2 BF16

fn load_w(wrow: u32, kb: u32, i: u32) {
  let per = select(8u, 4u, WDTYPE == 0u);                 // elements per vec4
  let row_vecs = (chunk.k + per - 1u) / per;
  let v0 = kb * (32u / per);
  for (var v = 0u; v < 32u / per; v++) {
    var w = vec4<u32>(0u);
    if (v0 + v < row_vecs) { w = weight[wrow * row_vecs + v0 + v]; }
    let k = v * per;
    if (WDTYPE == 0u) {
      for (var e = 0u; e < 4u; e++) { ws[(k + e) * BN + i] = bitcast<f32>(w[e]); }
    } else {
      for (var e = 0u; e < 4u; e++) {
        let pair = select(unpack_bf16x2(w[e]), unpack_f16x2(w[e]), WDTYPE == 1u);
        ws[(k + 2u * e) * BN + i] = pair.x;
        ws[(k + 2u * e + 1u) * BN + i] = pair.y;
      }
    }
  }
}
