// ggml Q4_K blocks (on shaders/lib/ggml_words.wgsl; interface in ./q8_0.wgsl): 256 values in 144 bytes,
// d f16 @0 | dmin f16 @2 | scales u8[12] @4 | qs u8[128] @16, i.e. nine vec4<u32>: the header, then
// qs. 144 is a multiple of 16, so blocks are vec4-aligned and every read is one vec4 load. Sub-block s
// (32 values) has a 6-bit scale sc and min m (get_scale_min_k4); values 64p + l (l < 32) are the low
// nibbles of qs[32p + l] (sub-block 2p), values 64p + 32 + l their high nibbles (sub-block 2p + 1);
// w = (d·sc)·q − dmin·m.
// Decode slice j (0..7): the 16 bytes qs[32p + 16h ..] (p = j/2, h = j%2), one vec4, whose low nibbles
// are values 64p + 16h + (0..15) and high nibbles values 64p + 32 + 16h + (0..15): every loaded bit is
// used, and the dot product is (d·sc)·Σ q·x − (dmin·m)·Σ x per group. Matmul unit u: sub-block u.

const QK: u32 = 256u;
const QBYTES: u32 = 144u;

// slice_group, scale_byte and scale_min: ./k_scales.wgsl (shared with Q5_K).

fn nibble_dot(w: u32, shift: u32, x: vec4<f32>) -> f32 {
  return dot(vec4<f32>(byte_lanes(w, shift, 0xfu)), x);
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let b = at >> 4u;
  let h = weight[b];
  let p = j >> 1u;
  let q = weight[b + 1u + 2u * p + (j & 1u)];
  let a = scale_min(h, 2u * p);
  let c = scale_min(h, 2u * p + 1u);
  let lo = (nibble_dot(q.x, 0u, xb.v[0]) + nibble_dot(q.y, 0u, xb.v[1])) + (nibble_dot(q.z, 0u, xb.v[2]) + nibble_dot(q.w, 0u, xb.v[3]));
  let hi = (nibble_dot(q.x, 4u, xb.v[4]) + nibble_dot(q.y, 4u, xb.v[5])) + (nibble_dot(q.z, 4u, xb.v[6]) + nibble_dot(q.w, 4u, xb.v[7]));
  return (a.x * lo - a.y * xb.s.x) + (c.x * hi - c.y * xb.s.y);
}

struct WRaw {
  q: array<u32, 8>,            // qs[32p .. 32p + 31] for p = u / 2
  shift: u32,                  // 0: low nibbles (u even), 4: high
  dm: vec2<f32>,               // (d·sc, dmin·m)
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  let b = at >> 4u;
  let p = u >> 1u;
  let a = weight[b + 1u + 2u * p];
  let c = weight[b + 2u + 2u * p];
  return WRaw(array<u32, 8>(a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w), (u & 1u) * 4u, scale_min(weight[b], u));
}

fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  return array<vec4<f32>, 2>(
    r.dm.x * vec4<f32>(byte_lanes(r.q[2u * p], r.shift, 0xfu)) - r.dm.y,
    r.dm.x * vec4<f32>(byte_lanes(r.q[2u * p + 1u], r.shift, 0xfu)) - r.dm.y,
  );
}
