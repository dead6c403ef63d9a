// Q8_0's part of the super-block decode matvec (shaders/matvec_superblock.wgsl), on ./superblock_words.wgsl,
// ./superblock_x.wgsl (SbX, sb_load_x) and shaders/lib/ggml_words.wgsl (i8x4), in place of ./q8_0.wgsl:
// its "super-block" is eight Q8_0 blocks (256 values in 272 bytes = 17 vec4s; K a multiple of 256). Lane
// part p takes blocks 2p and 2p + 1, words 17p .. 17p + 16 of the group (p words into vec4 4p): five 16-byte
// loads for 68 bytes. Block 2p is word 0's low half (d) and the 32 bytes after it; block 2p + 1 is word
// 8's high half (d) and words 9 .. 16. Per block the dot is d·Σ q·x in ./q8_0.wgsl's order.

const QK: u32 = 256u;
const QBYTES: u32 = 272u;
const SB_LANES: u32 = 4u;

// Σ of 16 signed bytes q against x values v[o .. o + 3].
fn sb_i8_dot(q: vec4<u32>, xs: SbX, o: u32) -> f32 {
  return (dot(i8x4(q.x), xs.v[o]) + dot(i8x4(q.y), xs.v[o + 1u])) + (dot(i8x4(q.z), xs.v[o + 2u]) + dot(i8x4(q.w), xs.v[o + 3u]));
}

fn sb_dot(at: u32, part: u32, xs: SbX) -> f32 {
  let b = (at >> 4u) + 4u * part;
  let a0 = weight[b];
  let a1 = weight[b + 1u];
  let a2 = weight[b + 2u];
  let a3 = weight[b + 3u];
  let a4 = weight[b + 4u];
  let w0 = sb_words(a0, a1, part);                         // words 0 .. 3 of the lane's run
  let w1 = sb_words(a1, a2, part);                         // 4 .. 7
  let w2 = sb_words(a2, a3, part);                         // 8 .. 11
  let w3 = sb_words(a3, a4, part);                         // 12 .. 15
  let w16 = a4[part];
  let d0 = unpack_f16x2(w0.x).x;
  let d1 = unpack_f16x2(w2.x).y;
  let s0 = sb_i8_dot(sb_after_half(w0, w1.x), xs, 0u) + sb_i8_dot(sb_after_half(w1, w2.x), xs, 4u);
  let s1 = sb_i8_dot(vec4<u32>(w2.yzw, w3.x), xs, 8u) + sb_i8_dot(vec4<u32>(w3.yzw, w16), xs, 12u);
  return d0 * s0 + d1 * s1;
}
