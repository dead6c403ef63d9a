// ggml Q4_0 blocks (on shaders/lib/ggml_words.wgsl; interface in ./q8_0.wgsl): 32 values in 18 bytes,
// d f16 @0 | qs u8[16] @2; value j < 16 is the low nibble of qs[j], value j + 16 its high nibble;
// w = (q − 8)·d. Blocks are 2-byte aligned. Slice and unit: the whole block. The dot product is
// d·(Σ q·x − 8·Σ x), the offset folded into the x sums shared by all rows.

const QK: u32 = 32u;
const QBYTES: u32 = 18u;

fn slice_group(s: u32, g: u32) -> u32 {
  return 32u * s + 16u * g;
}

// Σ over a word's four bytes' nibbles (shift 0: low, 4: high) times four x values.
fn nibble_dot(w: u32, shift: u32, x: vec4<f32>) -> f32 {
  return dot(vec4<f32>(byte_lanes(w, shift, 0xfu)), x);
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let d = f16_at(at);
  let q = bytes16_at(at + 2u);
  let lo = (nibble_dot(q.x, 0u, xb.v[0]) + nibble_dot(q.y, 0u, xb.v[1])) + (nibble_dot(q.z, 0u, xb.v[2]) + nibble_dot(q.w, 0u, xb.v[3]));
  let hi = (nibble_dot(q.x, 4u, xb.v[4]) + nibble_dot(q.y, 4u, xb.v[5])) + (nibble_dot(q.z, 4u, xb.v[6]) + nibble_dot(q.w, 4u, xb.v[7]));
  return d * ((lo + hi) - 8.0 * (xb.s.x + xb.s.y));
}

struct WRaw {
  q: vec4<u32>,
  d: f32,
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  return WRaw(bytes16_at(at + 2u), f16_at(at));
}

// Values 8p .. 8p + 7: low nibbles of bytes 8p .. for p < 2, high nibbles of bytes 8(p − 2) .. after.
fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  let shift = select(0u, 4u, p >= 2u);
  let w = 2u * (p & 1u);
  return array<vec4<f32>, 2>(
    (vec4<f32>(byte_lanes(r.q[w], shift, 0xfu)) - 8.0) * r.d,
    (vec4<f32>(byte_lanes(r.q[w + 1u], shift, 0xfu)) - 8.0) * r.d,
  );
}
