// dense_dot: the dense F32 / F16 / BF16 block dot of the decode matvec (shaders/matvec.wgsl; on
// ./dense.wgsl, whose WDTYPE and weight it reads). A block is one vec4<u32> of a row: 4 F32 or 8
// F16/BF16 weights (two a word, element 2i in the low half). Rows are padded with zero weights to a
// whole vec4 at upload; x elements at or past k are read as 0 (x is read in vec4s, so its buffer is a whole number of them).
// x_fold (shaders/lib/x_plain.wgsl or x_rmsnorm.wgsl) sees every x vec4 once, masked.
// BF16 decodes as two shifts: the low halves are the even elements, the high halves the odd ones, so
// the x block is split into even and odd elements once and shared by all rows.

override BLOCK_K: u32 = select(8u, 4u, WDTYPE == 0u);

struct XBlock {
  a: vec4<f32>,                  // F32: the block; F16: elements 0–3; BF16: elements 0, 2, 4, 6
  b: vec4<f32>,                  // F16: elements 4–7; BF16: elements 1, 3, 5, 7
}

fn x_vec(i: u32) -> vec4<f32> {
  let v = x[x_at + i];
  let k0 = i * 4u;
  if (k0 + 4u <= chunk.k) { return x_fold(v, i); }
  return x_fold(select(vec4<f32>(0.0), v, k0 + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(chunk.k)), i);
}

fn load_x(blk: u32) -> XBlock {
  if (WDTYPE == 0u) { return XBlock(x_vec(blk), vec4<f32>(0.0)); }
  let lo = x_vec(2u * blk);
  let hi = x_vec(2u * blk + 1u);
  if (WDTYPE == 1u) { return XBlock(lo, hi); }
  return XBlock(vec4<f32>(lo.x, lo.z, hi.x, hi.z), vec4<f32>(lo.y, lo.w, hi.y, hi.w));
}

fn block_dot(row: u32, blk: u32, xb: XBlock) -> f32 {
  let w = weight[row * ((chunk.k + BLOCK_K - 1u) / BLOCK_K) + blk];
  if (WDTYPE == 0u) { return dot(bitcast<vec4<f32>>(w), xb.a); }
  if (WDTYPE == 1u) { return dot(unpack_f16x4(w.xy), xb.a) + dot(unpack_f16x4(w.zw), xb.b); }
  return dot(bitcast<vec4<f32>>(w << vec4<u32>(16u)), xb.a) + dot(bitcast<vec4<f32>>(w & vec4<u32>(0xffff0000u)), xb.b);
}
