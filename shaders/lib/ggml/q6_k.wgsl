// ggml Q6_K blocks (on shaders/lib/ggml_words.wgsl; interface in ./q8_0.wgsl): 256 values in 210 bytes,
// ql u8[128] @0 | qh u8[64] @128 | scales i8[16] @192 | d f16 @208; 2-byte aligned. For half h (values
// 128h ..) and l < 32, with a = ql[64h + l], b = ql[64h + 32 + l], c = qh[32h + l], the 6-bit codes of
// values 128h + l + 32·i are: i = 0: a & 15 | (c & 3) << 4, i = 1: b & 15 | (c >> 2 & 3) << 4,
// i = 2: a >> 4 | (c >> 4 & 3) << 4, i = 3: b >> 4 | (c >> 6) << 4; w = (d·scales[8h + l/16 + 2i])·(q − 32).
// Decode slice j (0..7): half h = j/4, l in 16g .. 16g + 15 (g = j/2 % 2), quarters i = q and q + 2
// (q = j % 2): 16 bytes of ql (both nibbles used) and 16 of qh (two of its four bit pairs), one scale
// per group; the dot product is (d·sc)·(Σ q·x − 32·Σ x) per group. Matmul unit u: values 32u ..

const QK: u32 = 256u;
const QBYTES: u32 = 210u;

fn slice_group(s: u32, g: u32) -> u32 {
  let j = s & 7u;
  return 256u * (s >> 3u) + 128u * (j >> 2u) + 16u * ((j >> 1u) & 1u) + 32u * (j & 1u) + 64u * g;
}

// 6-bit codes of a word's four bytes: ql nibbles (shift 0 or 4) | qh bits at `bit` .. bit + 1, as f32.
fn codes6(ql: u32, shift: u32, qh: u32, bit: u32) -> vec4<f32> {
  return vec4<f32>(byte_lanes(ql, shift, 0xfu) | (byte_lanes(qh, bit, 3u) << vec4<u32>(4u)));
}

fn slice_dot(at: u32, j: u32, xb: XBlock) -> f32 {
  let h = j >> 2u;
  let g = (j >> 1u) & 1u;
  let q = j & 1u;
  let ql = bytes16_at(at + 64u * h + 32u * q + 16u * g);
  let qh = bytes16_at(at + 128u + 32u * h + 16u * g);
  let d = f16_at(at + 208u);
  let sc = at + 192u + 8u * h + g + 2u * q;
  let s0 = d * f32(i8_at(sc));
  let s1 = d * f32(i8_at(sc + 4u));
  let b0 = 2u * q;
  let b1 = 2u * q + 4u;
  let lo = (dot(codes6(ql.x, 0u, qh.x, b0), xb.v[0]) + dot(codes6(ql.y, 0u, qh.y, b0), xb.v[1]))
         + (dot(codes6(ql.z, 0u, qh.z, b0), xb.v[2]) + dot(codes6(ql.w, 0u, qh.w, b0), xb.v[3]));
  let hi = (dot(codes6(ql.x, 4u, qh.x, b1), xb.v[4]) + dot(codes6(ql.y, 4u, qh.y, b1), xb.v[5]))
         + (dot(codes6(ql.z, 4u, qh.z, b1), xb.v[6]) + dot(codes6(ql.w, 4u, qh.w, b1), xb.v[7]));
  return s0 * (lo - 32.0 * xb.s.x) + s1 * (hi - 32.0 * xb.s.y);
}

struct WRaw {
  ql: array<u32, 8>,           // ql[64h + 32(i % 2) ..] for h = u / 4, quarter i = u % 4
  qh: array<u32, 8>,           // qh[32h ..]
  shift: u32,                  // ql nibble: 0 (i < 2) or 4
  bit: u32,                    // qh bit pair: 2i
  s: vec2<f32>,                // d·scale for l < 16 and l ≥ 16
}

fn unit_raw(at: u32, u: u32) -> WRaw {
  let h = u >> 2u;
  let i = u & 3u;
  let l0 = bytes16_at(at + 64u * h + 32u * (i & 1u));
  let l1 = bytes16_at(at + 64u * h + 32u * (i & 1u) + 16u);
  let h0 = bytes16_at(at + 128u + 32u * h);
  let h1 = bytes16_at(at + 144u + 32u * h);
  let d = f16_at(at + 208u);
  let sc = at + 192u + 8u * h + 2u * i;
  return WRaw(array<u32, 8>(l0.x, l0.y, l0.z, l0.w, l1.x, l1.y, l1.z, l1.w), array<u32, 8>(h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w),
    (i >> 1u) * 4u, 2u * i, vec2<f32>(d * f32(i8_at(sc)), d * f32(i8_at(sc + 1u))));
}

fn unit_part(r: WRaw, p: u32) -> array<vec4<f32>, 2> {
  let s = select(r.s.x, r.s.y, p >= 2u);
  return array<vec4<f32>, 2>(
    s * (codes6(r.ql[2u * p], r.shift, r.qh[2u * p], r.bit) - 32.0),
    s * (codes6(r.ql[2u * p + 1u], r.shift, r.qh[2u * p + 1u], r.bit) - 32.0),
  );
}
