// ggml_dot: the ggml block type's block dot of the decode matvec (shaders/matvec.wgsl; the type's
// blocks: shaders/lib/ggml/<type>.wgsl on shaders/lib/ggml_words.wgsl). A skeleton block is one
// slice of 32 values of a row (QK / 32 slices a ggml block): two groups of 16 x values, loaded once for
// the row group's ROWS rows with their sums (the types with a min or an offset fold it into them).

const BLOCK_K: u32 = 32u;
const SLICES: u32 = QK / 32u;

fn load_x(blk: u32) -> XBlock {
  var xb: XBlock;
  for (var g = 0u; g < 2u; g++) {
    let base = slice_group(blk, g) / 4u;
    var s = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i++) {
      let v = x_fold(x[x_at + base + i], base + i);   // shaders/lib/x_plain.wgsl or x_rmsnorm.wgsl
      xb.v[4u * g + i] = v;
      s += v;
    }
    xb.s[g] = (s.x + s.y) + (s.z + s.w);
  }
  return xb;
}

fn block_dot(row: u32, blk: u32, xb: XBlock) -> f32 {
  let at = row * (chunk.k / QK * QBYTES) + (blk / SLICES) * QBYTES;
  return slice_dot(at, blk % SLICES, xb);
}
