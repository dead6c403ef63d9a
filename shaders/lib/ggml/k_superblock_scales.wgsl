// k_superblock_scales: a super-block matvec lane's four (scale, min) pairs of a Q4_K / Q5_K super-block
// (./q4_k_superblock.wgsl, ./q5_k_superblock.wgsl). Lane part 2v + h owns the sub-blocks 2v, 2v + 1, 2v + 4
// and 2v + 5; their pairs sit in the scale bytes 2v and 2v + 1 of each of the three scale words (header
// words 1–3, get_scale_min_k4's packing), so they unpack with constant shifts of the words moved down by
// 16v bits, no byte indexing.

struct SbScales {
  ds: vec4<f32>,               // d·sc of the four sub-blocks, rounded as ggml rounds it
  ms: vec4<f32>,               // dmin·m
}

fn sb_scales(hd: vec4<u32>, v: u32) -> SbScales {
  let sh = 16u * v;
  let s1 = hd.y >> sh;                                     // scale bytes 2v, 2v + 1: scales of sub-blocks 2v, 2v + 1
  let s2 = hd.z >> sh;                                     // bytes 4 + 2v ..: their mins
  let s3 = hd.w >> sh;                                     // bytes 8 + 2v ..: low bits of sub-blocks 2v + 4, 2v + 5
  let sc = vec4<u32>(s1 & 63u, (s1 >> 8u) & 63u,
                     (s3 & 15u) | (((s1 >> 6u) & 3u) << 4u), ((s3 >> 8u) & 15u) | (((s1 >> 14u) & 3u) << 4u));
  let mn = vec4<u32>(s2 & 63u, (s2 >> 8u) & 63u,
                     ((s3 >> 4u) & 15u) | (((s2 >> 6u) & 3u) << 4u), ((s3 >> 12u) & 15u) | (((s2 >> 14u) & 3u) << 4u));
  let dm = unpack_f16x2(hd.x);
  return SbScales(dm.x * vec4<f32>(sc), dm.y * vec4<f32>(mn));
}
