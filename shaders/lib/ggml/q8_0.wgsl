// ggml Q8_0 blocks (on shaders/lib/ggml_words.wgsl): 32 values in 34 bytes, d f16 @0 | qs i8[32] @2;
// w[j] = qs[j]·d. Blocks are 2-byte aligned. A decode slice and a matmul unit are both the whole block.
// What every shaders/lib/ggml/<type>.wgsl provides:
//   QK, QBYTES                       values and bytes per block
//   slice_group(s, g)                column of the first of the 16 x values of group g (0, 1) of row
//                                    slice s (32 values; QK / 32 slices a block)
//   slice_dot(at, j, xb)             Σ w·x over slice j of the block at byte `at`
//   WRaw, unit_raw(at, u)            unit u (values 32u .. 32u + 31) of the block, as stored
//   unit_part(raw, p)                its values 8p .. 8p + 7, dequantized as ggml does

const QK: u32 = 32u;
const QBYTES: u32 = 34u;

fn slice_group(s: u32, g: u32) -> u32 {
  return 32u * s + 16u * g;
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let d = f16_at(at);
  let a = bytes16_at(at + 2u);                              // values 0 .. 15
  let b = bytes16_at(at + 18u);                             // values 16 .. 31
  let sa = (dot(i8x4(a.x), xb.v[0]) + dot(i8x4(a.y), xb.v[1])) + (dot(i8x4(a.z), xb.v[2]) + dot(i8x4(a.w), xb.v[3]));
  let sb = (dot(i8x4(b.x), xb.v[4]) + dot(i8x4(b.y), xb.v[5])) + (dot(i8x4(b.z), xb.v[6]) + dot(i8x4(b.w), xb.v[7]));
  return d * (sa + sb);
}

struct WRaw {
  q: array<u32, 8>,
  d: f32,
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  let a = bytes16_at(at + 2u);
  let b = bytes16_at(at + 18u);
  return WRaw(array<u32, 8>(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w), f16_at(at));
}

fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  return array<vec4<f32>, 2>(i8x4(r.q[2u * p]) * r.d, i8x4(r.q[2u * p + 1u]) * r.d);
}
