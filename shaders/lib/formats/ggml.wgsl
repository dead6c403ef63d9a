// ggml: the block decode of a ggml block type (the interface every format gives,
// docs/kernels.md "Weight formats"), on the type's blocks (shaders/lib/ggml/<type>.wgsl, on
// shaders/lib/ggml_words.wgsl). A block here is one 32-value unit of a ggml block (the type's WRaw,
// read once per row), decoded in PARTS = 4 parts of 8 as ggml does.
//
// Bindings (declared in src/gpu/kernels/linear/formats.ts, which generates their WGSL):
//   weight storage, read  array<vec4<u32>>: the chunk's rows as stored, k / QK · QBYTES bytes a row

fn w_raw(row: u32, blk: u32, k: u32) -> WRaw {
  let units = QK / 32u;
  return unit_raw(row * (k / QK * QBYTES) + (blk / units) * QBYTES, blk % units);
}

fn w_decode(raw: WRaw, part: u32) -> array<vec4<f32>, 2> {
  return unit_part(raw, part);
}
