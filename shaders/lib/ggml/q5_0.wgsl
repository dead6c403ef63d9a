// ggml Q5_0 blocks (on shaders/lib/ggml_words.wgsl; interface in ./q8_0.wgsl): 32 values in 22 bytes,
// d f16 @0 | qh u32 @2 | qs u8[16] @6; q = nibble (as Q4_0) | bit j of qh << 4 for value j;
// w = (q − 16)·d. Blocks are 2-byte aligned. Slice and unit: the whole block.

const QK: u32 = 32u;
const QBYTES: u32 = 22u;

fn slice_group(s: u32, g: u32) -> u32 {
  return 32u * s + 16u * g;
}

// The 5-bit codes of values v .. v + 3: nibbles of word w (shift 0: low, 4: high) and bits v .. v + 3 of qh.
fn codes5(w: u32, shift: u32, qh: u32, v: u32) -> vec4<f32> {
  let high = ((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + v)) & vec4<u32>(1u)) << vec4<u32>(4u);
  return vec4<f32>(byte_lanes(w, shift, 0xfu) | high);
}

fn qh_at(at: u32) -> u32 {
  return u16_at(at + 2u) | (u16_at(at + 4u) << 16u);
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let d = f16_at(at);
  let qh = qh_at(at);
  let q = bytes16_at(at + 6u);
  let lo = (dot(codes5(q.x, 0u, qh, 0u), xb.v[0]) + dot(codes5(q.y, 0u, qh, 4u), xb.v[1]))
         + (dot(codes5(q.z, 0u, qh, 8u), xb.v[2]) + dot(codes5(q.w, 0u, qh, 12u), xb.v[3]));
  let hi = (dot(codes5(q.x, 4u, qh, 16u), xb.v[4]) + dot(codes5(q.y, 4u, qh, 20u), xb.v[5]))
         + (dot(codes5(q.z, 4u, qh, 24u), xb.v[6]) + dot(codes5(q.w, 4u, qh, 28u), xb.v[7]));
  return d * ((lo + hi) - 16.0 * (xb.s.x + xb.s.y));
}

struct WRaw {
  q: vec4<u32>,
  qh: u32,
  d: f32,
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  return WRaw(bytes16_at(at + 6u), qh_at(at), f16_at(at));
}

fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  let shift = select(0u, 4u, p >= 2u);
  let w = 2u * (p & 1u);
  return array<vec4<f32>, 2>(
    (codes5(r.q[w], shift, r.qh, 8u * p) - 16.0) * r.d,
    (codes5(r.q[w + 1u], shift, r.qh, 8u * p + 4u) - 16.0) * r.d,
  );
}
