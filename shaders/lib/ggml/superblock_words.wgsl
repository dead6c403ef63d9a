// superblock_words: the super-block matvec's 16-byte reads of the 32-value ggml types (./q8_0_superblock.wgsl,
// ./q4_0_superblock.wgsl, ./q5_0_superblock.wgsl). Their blocks (34, 18 and 22 bytes) are only 2-byte
// aligned, but eight of them (272, 144 and 176 bytes) are a whole number of vec4s: with K a multiple of
// 256 every row, and so every group of eight blocks, starts vec4-aligned (the structure's "super-block").
// Each of SB_LANES = 4 lanes takes two neighbouring blocks of a group, a run of whole words that starts
// `r` words into a vec4: it loads the vec4s covering the run (16-byte loads, neighbouring lanes reading
// neighbouring bytes) and moves each window of four words down by r with two selects (no indexing).

// Words r .. r + 3 of the eight words lo, hi (r < 4).
fn sb_words(lo: vec4<u32>, hi: vec4<u32>, r: u32) -> vec4<u32> {
  let r1 = (r & 1u) != 0u;
  let lo1 = select(lo, vec4<u32>(lo.yzw, hi.x), r1);
  let hi1 = select(hi.xy, hi.yz, r1);
  return select(lo1, vec4<u32>(lo1.zw, hi1), (r & 2u) != 0u);
}

// The 16 bytes that start 2 bytes into the words a, then b.x (a block's quants after its f16 scale).
fn sb_after_half(a: vec4<u32>, b: u32) -> vec4<u32> {
  return (a >> vec4<u32>(16u)) | (vec4<u32>(a.yzw, b) << vec4<u32>(16u));
}

// The super-block's columns, as ./superblock_x.wgsl loads them: a lane's part is 64 values, its two blocks.
fn sb_group_col(sb: u32, part: u32, g: u32) -> u32 {
  return 256u * sb + 64u * part + 16u * g;
}
