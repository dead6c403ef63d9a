// matmul_ggml: the ggml block type's weight tile of the prefill matmul (skeleton:
// shaders/lib/matmul_tiles.wgsl; the type's blocks: shaders/lib/ggml/<type>.wgsl). A 32-column k block
// of a row is one unit of its ggml block, dequantized as ggml does into workgroup memory.
//
// Bindings (declared in src/gpu/kernels/linear/ggml.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   weight storage, read  array<vec4<u32>>: the chunk's rows as stored, k / QK · QBYTES bytes a row
//   x      storage, read  array<f32> [n, k]
//   y      storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk  uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

fn load_w(wrow: u32, kb: u32, i: u32) {
  let units = QK / 32u;
  let raw = unit_raw(wrow * (chunk.k / QK * QBYTES) + (kb / units) * QBYTES, kb % units);
  for (var p = 0u; p < 4u; p++) {
    let v = unit_part(raw, p);
    for (var e = 0u; e < 4u; e++) {
      ws[(8u * p + e) * BN + i] = v[0][e];
      ws[(8u * p + 4u + e) * BN + i] = v[1][e];
    }
  }
}
