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
