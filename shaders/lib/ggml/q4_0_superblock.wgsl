// Q4_0's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on
// ./superblock_words.wgsl (sb_nibbles), ./superblock_x.wgsl (SbX, sb_load_x) and shaders/lib/ggml_words.wgsl,
// in place of ./q4_0.wgsl: its "super-block" is eight Q4_0 blocks (256 values in 144 bytes = 9 vec4s; K a multiple of
// 256). Lane part p takes blocks 2p and 2p + 1, words 9p .. 9p + 8 of the group (p words into vec4 2p):
// three 16-byte loads for 36 bytes. Block 2p is word 0's low half (d) and the 16 bytes after it; block
// 2p + 1 is word 4's high half (d) and words 5 .. 8. A block's low nibbles are its values 0 .. 15, the high
// ones 16 .. 31; per block the dot is d·(Σ q·x − 8·Σ x) in ./q4_0.wgsl's order.

const QK: u32 = 256u;
const QBYTES: u32 = 144u;
const SB_LANES: u32 = 4u;

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let b = (at >> 4u) + 2u * part;
  let a0 = weight[b];
  let a1 = weight[b + 1u];
  let a2 = weight[b + 2u];
  let w0 = sb_words(a0, a1, part);                         // words 0 .. 3 of the lane's run
  let w1 = sb_words(a1, a2, part);                         // 4 .. 7
  let w8 = a2[part];
  let q0 = sb_after_half(w0, w1.x);
  let q1 = vec4<u32>(w1.yzw, w8);
  let d0 = unpack_f16x2(w0.x).x;
  let d1 = unpack_f16x2(w1.x).y;
  let t0 = (sb_nibbles(q0, 0u, xs, 0u) + sb_nibbles(q0, 4u, xs, 4u)) - 8.0 * (xs.s.x + xs.s.y);
  let t1 = (sb_nibbles(q1, 0u, xs, 8u) + sb_nibbles(q1, 4u, xs, 12u)) - 8.0 * (xs.s.z + xs.s.w);
  return d0 * t0 + d1 * t1;
}
