// Q5_1's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on
// ./superblock_words.wgsl (sb_codes5_dot), ./superblock_x.wgsl (SbX, sb_load_x) and
// shaders/lib/ggml_words.wgsl, in place of ./q5_1.wgsl: its "super-block" is eight Q5_1 blocks (256 values
// in 192 bytes = 12 vec4s; K a multiple of 256). A block is six words: d f16 | m f16, qh (bit j: value j's
// fifth bit), qs[16] (low nibbles: values 0 .. 15, high: 16 .. 31). Lane part p takes blocks 2p and 2p + 1,
// vec4s 3p .. 3p + 2 of the group: three aligned 16-byte loads, every byte used. Per block the dot is
// d·Σ q·x + m·Σ x in ./q5_1.wgsl's order.

const QK: u32 = 256u;
const QBYTES: u32 = 192u;
const SB_LANES: u32 = 4u;

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let b = (at >> 4u) + 3u * part;
  let a0 = weight[b];                                      // block 2p: dm, qh, qs words 0, 1
  let a1 = weight[b + 1u];                                 // its qs words 2, 3; block 2p + 1: dm, qh
  let a2 = weight[b + 2u];                                 // block 2p + 1's qs
  let dm0 = unpack_f16x2(a0.x);
  let dm1 = unpack_f16x2(a1.z);
  let t0 = dm0.x * sb_codes5_dot(vec4<u32>(a0.zw, a1.xy), a0.y, xs, 0u) + dm0.y * (xs.s.x + xs.s.y);
  let t1 = dm1.x * sb_codes5_dot(a2, a1.w, xs, 8u) + dm1.y * (xs.s.z + xs.s.w);
  return t0 + t1;
}
