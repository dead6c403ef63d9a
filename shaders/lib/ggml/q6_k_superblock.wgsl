// Q6_K's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on ./q6_k.wgsl (QK,
// QBYTES, codes6), ./superblock_x.wgsl (SbX, sb_load_x) and shaders/lib/ggml_words.wgsl. A super-block
// (210 bytes, 2-byte aligned: ql u8[128] @0 | qh u8[64] @128 | scales i8[16] @192 | d f16 @208) is shared
// by SB_LANES = 4 lanes. Lane part = 2h + g owns, in half h (values 128h ..), the 16 positions
// l = 16g .. 16g + 15 of all four quarters i (values 128h + 32i + l): the 16 bytes a = ql[64h + l] (quarters 0
// and 2: low and high nibbles), b = ql[64h + 32 + l] (quarters 1 and 3) and c = qh[32h + l] (bit pairs 2i),
// three 16-byte reads where every loaded bit is used, and the four scales scales[8h + g + 2i], once per
// super-block and row. Per quarter the dot is (d·sc)·(Σ q·x − 32·Σ x), as ./q6_k.wgsl's slice_dot rounds it.

const SB_LANES: u32 = 4u;

// The first column of group g (quarter i = g) of `part` in super-block sb (./superblock_x.wgsl loads them).
fn sb_group_col(sb: u32, part: u32, g: u32) -> u32 {
  return 256u * sb + 128u * (part >> 1u) + 16u * (part & 1u) + 32u * g;
}

// Σ of 16 six-bit codes (ql nibbles at `shift`, qh bit pair at `bit`) against x values v[o .. o + 3].
fn sb_codes(ql: vec4<u32>, shift: u32, qh: vec4<u32>, bit: u32, xs: SbX, o: u32) -> f32 {
  return (dot(codes6(ql.x, shift, qh.x, bit), xs.v[o]) + dot(codes6(ql.y, shift, qh.y, bit), xs.v[o + 1u]))
       + (dot(codes6(ql.z, shift, qh.z, bit), xs.v[o + 2u]) + dot(codes6(ql.w, shift, qh.w, bit), xs.v[o + 3u]));
}

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let h = part >> 1u;
  let g = part & 1u;
  let a = bytes16_at(at + 64u * h + 16u * g);              // quarters 0 (low nibbles) and 2 (high)
  let b = bytes16_at(at + 64u * h + 32u + 16u * g);        // quarters 1 and 3
  let c = bytes16_at(at + 128u + 32u * h + 16u * g);       // the high bit pairs of all four
  let d = f16_at(at + 208u);
  let sc = at + 192u + 8u * h + g;
  let ds = d * vec4<f32>(f32(i8_at(sc)), f32(i8_at(sc + 2u)), f32(i8_at(sc + 4u)), f32(i8_at(sc + 6u)));
  let q = vec4<f32>(sb_codes(a, 0u, c, 0u, xs, 0u), sb_codes(b, 0u, c, 2u, xs, 4u), sb_codes(a, 4u, c, 4u, xs, 8u), sb_codes(b, 4u, c, 6u, xs, 12u));
  let t = ds * (q - 32.0 * xs.s);
  return (t.x + t.y) + (t.z + t.w);
}
