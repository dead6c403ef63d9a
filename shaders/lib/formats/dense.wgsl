// dense: the block decode of a dense F32 / F16 / BF16 weight (the interface every format gives,
// docs/kernels.md "Weight formats"). A block is 8 elements of a row: one vec4<u32> of F16/BF16 (two a
// word, element 2i in the low half) or two of F32 (PARTS = 1); rows are padded with zeros to a whole
// vec4 at upload, and an F32 row's second vec4 past its end reads as zeros.
//
// Bindings (declared in src/gpu/kernels/linear/formats.ts, which generates their WGSL):
//   weight storage, read  array<vec4<u32>> [rows, ceil(k / per vec4)]: 4 F32 or 8 F16/BF16 per vec4

override WDTYPE: u32;            // 0 F32, 1 F16, 2 BF16

struct WRaw {
  a: vec4<u32>,
  b: vec4<u32>,                  // F32 only: elements 4–7
}

fn w_raw(row: u32, blk: u32, k: u32) -> WRaw {
  if (WDTYPE != 0u) { return WRaw(weight[row * ((k + 7u) / 8u) + blk], vec4<u32>(0u)); }
  let vecs = (k + 3u) / 4u;
  let b = select(vec4<u32>(0u), weight[row * vecs + min(2u * blk + 1u, vecs - 1u)], 2u * blk + 1u < vecs);
  return WRaw(weight[row * vecs + 2u * blk], b);
}

fn w_decode(raw: WRaw, part: u32) -> array<vec4<f32>, 2> {
  if (WDTYPE == 0u) { return array<vec4<f32>, 2>(bitcast<vec4<f32>>(raw.a), bitcast<vec4<f32>>(raw.b)); }
  if (WDTYPE == 1u) { return array<vec4<f32>, 2>(unpack_f16x4(raw.a.xy), unpack_f16x4(raw.a.zw)); }
  let lo = bitcast<vec4<f32>>(raw.a << vec4<u32>(16u));            // elements 0, 2, 4, 6
  let hi = bitcast<vec4<f32>>(raw.a & vec4<u32>(0xffff0000u));     // elements 1, 3, 5, 7
  return array<vec4<f32>, 2>(vec4<f32>(lo.x, hi.x, lo.y, hi.y), vec4<f32>(lo.z, hi.z, lo.w, hi.w));
}
