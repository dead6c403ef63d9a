// ggml_words: reading ggml blocks as GGUF stores them, from `weight` (array<vec4<u32>>: a chunk's rows
// back to back, 16 zero bytes after the last). Blocks of 18, 22, 34 and 210 bytes are only 2-byte
// aligned, so reads take an even byte offset and work in whole vec4 loads: a per-lane vec4 load costs
// about what a scalar one does on SIMD rasterizers, and 16 bytes at any even offset lie in two vec4s.
// Also struct XBlock, the x values a decode matvec slice dots against (shaders/lib/formats/ggml_dot.wgsl).

// Two groups of 16 consecutive x values (group g in v[4g .. 4g + 3]) and each group's sum.
struct XBlock {
  v: array<vec4<f32>, 8>,
  s: vec2<f32>,
}

// The 2 bytes at even byte b, in the low half of a u32.
fn u16_at(b: u32) -> u32 {
  let w = weight[b >> 4u][(b >> 2u) & 3u];
  return (w >> ((b & 2u) << 3u)) & 0xffffu;
}

// The f16 at even byte b.
fn f16_at(b: u32) -> f32 {
  return unpack_f16x2(u16_at(b)).x;
}

// The 4 bytes at byte b, b % 4 == 0.
fn u32_at(b: u32) -> u32 {
  return weight[b >> 4u][(b >> 2u) & 3u];
}

// The signed byte at byte b (any b).
fn i8_at(b: u32) -> i32 {
  let h = u16_at(b & ~1u);
  return (bitcast<i32>(h << (24u - ((b & 1u) << 3u)))) >> 24u;
}

// The 16 bytes at even byte b as four words, byte b lowest in .x: the two vec4s holding them, shifted
// down by b's word within the first (two selects of a rotation by 1 and by 2 words), then by half a
// word when b % 4 == 2.
fn bytes16_at(b: u32) -> vec4<u32> {
  let i = b >> 4u;
  let lo = weight[i];
  let hi = weight[i + 1u];
  let r = (b >> 2u) & 3u;
  let r1 = (r & 1u) != 0u;
  let lo1 = select(lo, vec4<u32>(lo.yzw, hi.x), r1);
  let hi1 = select(hi, vec4<u32>(hi.yzw, 0u), r1);
  let r2 = (r & 2u) != 0u;
  let lo2 = select(lo1, vec4<u32>(lo1.zw, hi1.xy), r2);
  let next = select(hi1.x, hi1.z, r2);                     // the word after lo2.w
  let odd = (b & 2u) != 0u;
  return select(lo2, (lo2 >> vec4<u32>(16u)) | (vec4<u32>(lo2.yzw, next) << vec4<u32>(16u)), odd);
}

// The four bytes of w as vec4<u32> lanes shifted right by `shift` (0 or 4 for nibbles): lane i holds
// byte i >> shift, masked by `mask`.
fn byte_lanes(w: u32, shift: u32, mask: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(mask);
}

// Signed bytes of w as f32, byte 0 in .x.
fn i8x4(w: u32) -> vec4<f32> {
  return vec4<f32>((vec4<i32>(bitcast<i32>(w)) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u));
}
