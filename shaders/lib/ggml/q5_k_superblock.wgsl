// Q5_K's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on ./q5_k.wgsl (QK,
// QBYTES, codes5), ./k_superblock_scales.wgsl, ./superblock_x.wgsl (SbX, sb_load_x) and
// shaders/lib/ggml_words.wgsl. A super-block (176 bytes, vec4-aligned: header vec4 d | dmin | scales[12],
// qh as two vec4s, qs as eight) is shared by SB_LANES = 4 lanes, laid out as Q4_K's
// (./q4_k_superblock.wgsl): lane part 2v + h owns the sub-blocks 2v, 2v + 1, 2v + 4 and 2v + 5, positions
// l = 16h .. 16h + 15 of each: qs vec4s 2v + h and 4 + 2v + h, and qh vec4 h, whose bytes qh[l] hold the
// fifth bit of every sub-block at position l (bit s for sub-block s). Four 16-byte loads, every loaded
// byte used. Per sub-block the dot is (d·sc)·Σ q·x − (dmin·m)·Σ x, as ./q5_k.wgsl's slice_dot rounds it.

const SB_LANES: u32 = 4u;

// The first column of group g (sub-blocks 2v, 2v + 1, 2v + 4, 2v + 5) of `part` in super-block sb
// (./superblock_x.wgsl loads them).
fn sb_group_col(sb: u32, part: u32, g: u32) -> u32 {
  return 256u * sb + 64u * (part >> 1u) + 16u * (part & 1u) + 32u * (g & 1u) + 128u * (g >> 1u);
}

// Σ of 16 five-bit codes (qs nibbles at `shift`, qh bit `bit`) against x values v[o .. o + 3].
fn sb_codes5(q: vec4<u32>, shift: u32, qh: vec4<u32>, bit: u32, xs: SbX, o: u32) -> f32 {
  return (dot(codes5(q.x, shift, qh.x, bit), xs.v[o]) + dot(codes5(q.y, shift, qh.y, bit), xs.v[o + 1u]))
       + (dot(codes5(q.z, shift, qh.z, bit), xs.v[o + 2u]) + dot(codes5(q.w, shift, qh.w, bit), xs.v[o + 3u]));
}

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let b = at >> 4u;                                        // 176 = 11 · 16: super-blocks are vec4-aligned
  let hd = weight[b];
  let v = part >> 1u;
  let qh = weight[b + 1u + (part & 1u)];                   // qh vec4 h: positions 16h .. 16h + 15
  let qa = weight[b + 3u + part];                          // qs vec4 2v + h: sub-blocks 2v (low), 2v + 1 (high)
  let qb = weight[b + 7u + part];                          // qs vec4 4 + 2v + h: sub-blocks 2v + 4, 2v + 5
  let sc = sb_scales(hd, v);
  let s = 2u * v;
  let q = vec4<f32>(sb_codes5(qa, 0u, qh, s, xs, 0u), sb_codes5(qa, 4u, qh, s + 1u, xs, 4u),
                    sb_codes5(qb, 0u, qh, s + 4u, xs, 8u), sb_codes5(qb, 4u, qh, s + 5u, xs, 12u));
  let t = sc.ds * q - sc.ms * xs.s;
  return (t.x + t.y) + (t.z + t.w);
}
