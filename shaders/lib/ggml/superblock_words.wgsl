// superblock_words: the super-block matvec's 16-byte reads of the 32-value ggml types (./q8_0_superblock.wgsl,
// ./q4_0_superblock.wgsl, ./q5_0_superblock.wgsl, ./q4_1_superblock.wgsl, ./q5_1_superblock.wgsl). Their
// blocks (34, 18, 22, 20 and 24 bytes) are 2- or 4-byte aligned, but eight of them (272, 144, 176, 160
// and 192 bytes) are a whole number of vec4s: with K a multiple of
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

// Σ of 16 nibbles (shift 0: low, 4: high) of q against x values v[o .. o + 3] (Q4_0, Q4_1).
fn sb_nibbles(q: vec4<u32>, shift: u32, xs: SbX, o: u32) -> f32 {
  return (dot(vec4<f32>(byte_lanes(q.x, shift, 0xfu)), xs.v[o]) + dot(vec4<f32>(byte_lanes(q.y, shift, 0xfu)), xs.v[o + 1u]))
       + (dot(vec4<f32>(byte_lanes(q.z, shift, 0xfu)), xs.v[o + 2u]) + dot(vec4<f32>(byte_lanes(q.w, shift, 0xfu)), xs.v[o + 3u]));
}

// Four 5-bit codes (Q5_0, Q5_1): the nibbles (shift 0 or 4) of w's bytes and bits v .. v + 3 of qh.
fn sb_codes5(w: u32, shift: u32, qh: u32, v: u32) -> vec4<f32> {
  let high = ((vec4<u32>(qh) >> (vec4<u32>(0u, 1u, 2u, 3u) + v)) & vec4<u32>(1u)) << vec4<u32>(4u);
  return vec4<f32>(byte_lanes(w, shift, 0xfu) | high);
}

// Σ q·x of a 5-bit block (Q5_0, Q5_1): quants q (low nibbles: values 0 .. 15, high: 16 .. 31), high bits
// qh, x values v[o .. o + 7]; lo + hi as the types' slice_dot sums them.
fn sb_codes5_dot(q: vec4<u32>, qh: u32, xs: SbX, o: u32) -> f32 {
  let lo = (dot(sb_codes5(q.x, 0u, qh, 0u), xs.v[o]) + dot(sb_codes5(q.y, 0u, qh, 4u), xs.v[o + 1u]))
         + (dot(sb_codes5(q.z, 0u, qh, 8u), xs.v[o + 2u]) + dot(sb_codes5(q.w, 0u, qh, 12u), xs.v[o + 3u]));
  let hi = (dot(sb_codes5(q.x, 4u, qh, 16u), xs.v[o + 4u]) + dot(sb_codes5(q.y, 4u, qh, 20u), xs.v[o + 5u]))
         + (dot(sb_codes5(q.z, 4u, qh, 24u), xs.v[o + 6u]) + dot(sb_codes5(q.w, 4u, qh, 28u), xs.v[o + 7u]));
  return lo + hi;
}
