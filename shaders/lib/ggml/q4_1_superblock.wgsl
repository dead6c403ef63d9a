// Q4_1's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on
// ./superblock_words.wgsl (sb_nibbles), ./superblock_x.wgsl (SbX, sb_load_x) and shaders/lib/ggml_words.wgsl,
// in place of ./q4_1.wgsl: its "super-block" is eight Q4_1 blocks (256 values in 160 bytes = 10 vec4s; K a
// multiple of 256). A block is five words: d f16 | m f16, then qs[16] (low nibbles: values 0 .. 15, high:
// 16 .. 31). Lane part p takes blocks 2p and 2p + 1, words 10p .. 10p + 9 of the group (0 or 2 words into
// a vec4): three 16-byte loads for 40 bytes, every block word-aligned. Per block the dot is
// d·Σ q·x + m·Σ x in ./q4_1.wgsl's order.

const QK: u32 = 256u;
const QBYTES: u32 = 160u;
const SB_LANES: u32 = 4u;

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let first = 10u * part;                                  // the run's first word in the group
  let b = (at >> 4u) + (first >> 2u);
  let r = first & 3u;
  let a0 = weight[b];
  let a1 = weight[b + 1u];
  let a2 = weight[b + 2u];
  let w0 = sb_words(a0, a1, r);                            // words 0 .. 3 of the lane's run
  let w1 = sb_words(a1, a2, r);                            // 4 .. 7
  let w2 = sb_words(a2, vec4<u32>(0u), r);                 // 8, 9 (then past the run)
  let dm0 = unpack_f16x2(w0.x);
  let dm1 = unpack_f16x2(w1.y);
  let q0 = vec4<u32>(w0.yzw, w1.x);
  let q1 = vec4<u32>(w1.zw, w2.xy);
  let t0 = dm0.x * (sb_nibbles(q0, 0u, xs, 0u) + sb_nibbles(q0, 4u, xs, 4u)) + dm0.y * (xs.s.x + xs.s.y);
  let t1 = dm1.x * (sb_nibbles(q1, 0u, xs, 8u) + sb_nibbles(q1, 4u, xs, 12u)) + dm1.y * (xs.s.z + xs.s.w);
  return t0 + t1;
}
