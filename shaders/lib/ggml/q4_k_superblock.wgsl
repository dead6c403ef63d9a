// Q4_K's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on ./q4_k.wgsl (QK,
// QBYTES, nibble_dot), ./superblock_x.wgsl (SbX, sb_load_x) and shaders/lib/ggml_words.wgsl. A super-block (144 bytes: header vec4 d | dmin |
// scales[12], then qs as eight vec4s) is shared by SB_LANES = 4 lanes. Lane part i = 2v + h owns the
// sub-blocks 2v, 2v + 1, 2v + 4 and 2v + 5, values 16h .. 16h + 15 of each: qs vec4s 2v + h (the low
// nibbles are sub-block 2v's values, the high ones 2v + 1's) and 4 + 2v + h (sub-blocks 2v + 4 and 2v + 5),
// two 16-byte loads, plus the header's, whose four (scale, min) pairs ./k_superblock_scales.wgsl unpacks.
// Per sub-block the dot is (d·sc)·Σ q·x − (dmin·m)·Σ x, as ./q4_k.wgsl's slice_dot rounds it.

const SB_LANES: u32 = 4u;

// The first column of group g (sub-blocks 2v, 2v + 1, 2v + 4, 2v + 5) of `part` in super-block sb
// (./superblock_x.wgsl loads them).
fn sb_group_col(sb: u32, part: u32, g: u32) -> u32 {
  return 256u * sb + 64u * (part >> 1u) + 16u * (part & 1u) + 32u * (g & 1u) + 128u * (g >> 1u);
}

// Σ of 16 nibbles (shift 0: low, 4: high) of q against x values v[o .. o + 3].
fn sb_nibbles(q: vec4<u32>, shift: u32, xs: SbX, o: u32) -> f32 {
  return (nibble_dot(q.x, shift, xs.v[o]) + nibble_dot(q.y, shift, xs.v[o + 1u]))
       + (nibble_dot(q.z, shift, xs.v[o + 2u]) + nibble_dot(q.w, shift, xs.v[o + 3u]));
}

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let b = at >> 4u;                                        // 144 = 9 · 16: super-blocks are vec4-aligned
  let hd = weight[b];
  let v = part >> 1u;
  let qa = weight[b + 1u + part];                          // qs vec4 2v + h
  let qb = weight[b + 5u + part];                          // qs vec4 4 + 2v + h
  let sc = sb_scales(hd, v);                               // ./k_superblock_scales.wgsl
  let q = vec4<f32>(sb_nibbles(qa, 0u, xs, 0u), sb_nibbles(qa, 4u, xs, 4u), sb_nibbles(qb, 0u, xs, 8u), sb_nibbles(qb, 4u, xs, 12u));
  let t = sc.ds * q - sc.ms * xs.s;
  return (t.x + t.y) + (t.z + t.w);
}
