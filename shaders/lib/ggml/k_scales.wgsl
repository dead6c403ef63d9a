// The K-quant layout Q4_K and Q5_K share (composed before ./q4_k.wgsl or ./q5_k.wgsl): 256-value super-blocks
// of eight 32-value sub-blocks, header d f16 @0 | dmin f16 @2 | scales u8[12] @4 (ggml's get_scale_min_k4
// packing of eight 6-bit scales and mins), and decode slice s's group g (16 values) starting value.

fn slice_group(s: u32, g: u32) -> u32 {
  let j = s & 7u;
  return 256u * (s >> 3u) + 64u * (j >> 1u) + 16u * (j & 1u) + 32u * g;
}

// Byte i of the 12 scale bytes (header words 1–3).
fn scale_byte(h: vec4<u32>, i: u32) -> u32 {
  return (h[1u + (i >> 2u)] >> ((i & 3u) << 3u)) & 0xffu;
}

// (d·sc, dmin·m) of sub-block s, rounded as ggml rounds them.
fn scale_min(h: vec4<u32>, s: u32) -> vec2<f32> {
  let lo = vec2<u32>(scale_byte(h, s) & 63u, scale_byte(h, s + 4u) & 63u);
  let t = scale_byte(h, s + 4u);                            // s ≥ 4: bytes s + 4, s − 4 (= s & 3) and s
  let hi = vec2<u32>((t & 0xfu) | ((scale_byte(h, s & 3u) >> 6u) << 4u), (t >> 4u) | ((scale_byte(h, s) >> 6u) << 4u));
  let sm = select(lo, hi, s >= 4u);
  return unpack_f16x2(h.x) * vec2<f32>(sm);
}
