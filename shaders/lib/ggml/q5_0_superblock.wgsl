// Q5_0's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on
// ./superblock_words.wgsl (sb_codes5_dot), ./superblock_x.wgsl (SbX, sb_load_x) and shaders/lib/ggml_words.wgsl,
// in place of ./q5_0.wgsl: its "super-block" is eight Q5_0 blocks (256 values in 176 bytes = 11 vec4s; K a multiple of
// 256). A block is d f16 | qh u32 (bit j: value j's fifth bit) | qs[16] (low nibbles: values 0 .. 15, high:
// 16 .. 31). Lane part p takes blocks 2p and 2p + 1, words 11p .. 11p + 10 of the group (starting 11p % 4
// words into a vec4): four 16-byte loads for 44 bytes. Block 2p is word 0's low half (d), then qh and qs
// a half word off; block 2p + 1 is word 5's high half (d), qh word 6 and qs words 7 .. 10. Per block the
// dot is d·(Σ q·x − 16·Σ x) in ./q5_0.wgsl's order.

const QK: u32 = 256u;
const QBYTES: u32 = 176u;
const SB_LANES: u32 = 4u;

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let first = 11u * part;                                  // the run's first word in the group
  let b = (at >> 4u) + (first >> 2u);
  let r = first & 3u;
  let a0 = weight[b];
  let a1 = weight[b + 1u];
  let a2 = weight[b + 2u];
  let a3 = weight[b + 3u];
  let w0 = sb_words(a0, a1, r);                            // words 0 .. 3 of the lane's run
  let w1 = sb_words(a1, a2, r);                            // 4 .. 7
  let w2 = sb_words(a2, a3, r);                            // 8 .. 11 (11 is past the run)
  let qh0 = (w0.x >> 16u) | (w0.y << 16u);
  let q0 = sb_after_half(vec4<u32>(w0.yzw, w1.x), w1.y);
  let d0 = unpack_f16x2(w0.x).x;
  let d1 = unpack_f16x2(w1.y).y;
  let t0 = sb_codes5_dot(q0, qh0, xs, 0u) - 16.0 * (xs.s.x + xs.s.y);
  let t1 = sb_codes5_dot(vec4<u32>(w1.w, w2.xyz), w1.z, xs, 8u) - 16.0 * (xs.s.z + xs.s.w);
  return d0 * t0 + d1 * t1;
}
