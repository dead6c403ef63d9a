// ggml Q4_1 blocks (on shaders/lib/ggml_words.wgsl; interface in ./q8_0.wgsl): 32 values in 20 bytes,
// d f16 @0 | m f16 @2 | qs u8[16] @4; nibbles as Q4_0; w = q·d + m. Slice and unit: the whole block.
// The dot product is d·Σ q·x + m·Σ x.

const QK: u32 = 32u;
const QBYTES: u32 = 20u;

fn slice_group(s: u32, g: u32) -> u32 {
  return 32u * s + 16u * g;
}

fn nibble_dot(w: u32, shift: u32, x: vec4<f32>) -> f32 {
  return dot(vec4<f32>(byte_lanes(w, shift, 0xfu)), x);
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let dm = unpack_f16x2(u32_at(at));
  let q = bytes16_at(at + 4u);
  let lo = (nibble_dot(q.x, 0u, xb.v[0]) + nibble_dot(q.y, 0u, xb.v[1])) + (nibble_dot(q.z, 0u, xb.v[2]) + nibble_dot(q.w, 0u, xb.v[3]));
  let hi = (nibble_dot(q.x, 4u, xb.v[4]) + nibble_dot(q.y, 4u, xb.v[5])) + (nibble_dot(q.z, 4u, xb.v[6]) + nibble_dot(q.w, 4u, xb.v[7]));
  return dm.x * (lo + hi) + dm.y * (xb.s.x + xb.s.y);
}

struct WRaw {
  q: vec4<u32>,
  dm: vec2<f32>,
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  return WRaw(bytes16_at(at + 4u), unpack_f16x2(u32_at(at)));
}

fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  let shift = select(0u, 4u, p >= 2u);
  let w = 2u * (p & 1u);
  return array<vec4<f32>, 2>(
    vec4<f32>(byte_lanes(r.q[w], shift, 0xfu)) * r.dm.x + r.dm.y,
    vec4<f32>(byte_lanes(r.q[w + 1u], shift, 0xfu)) * r.dm.x + r.dm.y,
  );
}
