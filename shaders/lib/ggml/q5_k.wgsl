// ggml Q5_K blocks (on shaders/lib/ggml_words.wgsl; interface in ./q8_0.wgsl): 256 values in 176 bytes,
// d f16 @0 | dmin f16 @2 | scales u8[12] @4 | qh u8[32] @16 | qs u8[128] @48: eleven vec4<u32> (the
// header, qh, qs), vec4-aligned. As Q4_K, plus a 5th bit (+16): for value 64p + l (l < 32) bit 2p of
// qh[l], for 64p + 32 + l bit 2p + 1. Slices and units as Q4_K; a slice reads one vec4 of qh beside
// its vec4 of qs.

const QK: u32 = 256u;
const QBYTES: u32 = 176u;

// slice_group, scale_byte and scale_min: ./k_scales.wgsl (shared with Q4_K).

// 5-bit codes of a word's four bytes: nibbles (shift 0 or 4) and bit `bit` of the matching qh bytes.
fn codes5(w: u32, shift: u32, qh: u32, bit: u32) -> vec4<f32> {
  return vec4<f32>(byte_lanes(w, shift, 0xfu) | (byte_lanes(qh, bit, 1u) << vec4<u32>(4u)));
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let b = at >> 4u;
  let h = weight[b];
  let p = j >> 1u;
  let qh = weight[b + 1u + (j & 1u)];
  let q = weight[b + 3u + 2u * p + (j & 1u)];
  let a = scale_min(h, 2u * p);
  let c = scale_min(h, 2u * p + 1u);
  let ba = 2u * p;
  let lo = (dot(codes5(q.x, 0u, qh.x, ba), xb.v[0]) + dot(codes5(q.y, 0u, qh.y, ba), xb.v[1]))
         + (dot(codes5(q.z, 0u, qh.z, ba), xb.v[2]) + dot(codes5(q.w, 0u, qh.w, ba), xb.v[3]));
  let hi = (dot(codes5(q.x, 4u, qh.x, ba + 1u), xb.v[4]) + dot(codes5(q.y, 4u, qh.y, ba + 1u), xb.v[5]))
         + (dot(codes5(q.z, 4u, qh.z, ba + 1u), xb.v[6]) + dot(codes5(q.w, 4u, qh.w, ba + 1u), xb.v[7]));
  return (a.x * lo - a.y * xb.s.x) + (c.x * hi - c.y * xb.s.y);
}

struct WRaw {
  q: array<u32, 8>,            // qs[32p .. 32p + 31] for p = u / 2
  qh: array<u32, 8>,           // qh[0 .. 31]
  shift: u32,                  // nibble: 0 (u even) or 4
  bit: u32,                    // qh bit: u
  dm: vec2<f32>,               // (d·sc, dmin·m)
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  let b = at >> 4u;
  let p = u >> 1u;
  let a = weight[b + 3u + 2u * p];
  let c = weight[b + 4u + 2u * p];
  let h0 = weight[b + 1u];
  let h1 = weight[b + 2u];
  return WRaw(array<u32, 8>(a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w), array<u32, 8>(h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w),
    (u & 1u) * 4u, u, scale_min(weight[b], u));
}

fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  return array<vec4<f32>, 2>(
    r.dm.x * codes5(r.q[2u * p], r.shift, r.qh[2u * p], r.bit) - r.dm.y,
    r.dm.x * codes5(r.q[2u * p + 1u], r.shift, r.qh[2u * p + 1u], r.bit) - r.dm.y,
  );
}
