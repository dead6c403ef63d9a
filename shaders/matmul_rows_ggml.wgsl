// matmul_rows_ggml: the ggml block type's weights of the SIMD-rasterizer prefill matmul (skeleton:
// shaders/lib/matmul_rows.wgsl; the type's blocks: shaders/lib/ggml/<type>.wgsl). A skeleton block is
// one 32-value unit of a ggml block (WRaw, read once per row), decoded in 4 parts of 8.
//
// Bindings (declared in src/gpu/kernels/linear/ggml.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   weight storage, read  array<vec4<u32>>: the chunk's rows as stored, k / QK · QBYTES bytes a row
//   x      storage, read  array<f32> [n, k]
//   y      storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk  uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

const PARTS: u32 = 4u;

fn w_raw(row: u32, blk: u32) -> WRaw {
  let units = QK / 32u;
  return unit_raw(row * (chunk.k / QK * QBYTES) + (blk / units) * QBYTES, blk % units);
}

fn w_decode(raw: WRaw, part: u32) -> array<vec4<f32>, 2> {
  return unit_part(raw, part);
}
