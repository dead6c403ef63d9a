// superblock_x: the x side of the super-block decode matvec (shaders/matvec_superblock.wgsl), shared by
// the block types' superblock libraries (./q4_k_superblock.wgsl, ./q6_k_superblock.wgsl). A lane's part of
// a super-block is four groups of 16 consecutive values; the type says where each starts
// (fn sb_group_col(sb, part, g)). The lane loads them once (four vec4s a group) for the row group's ROWS
// rows, with each group's sum (what the types' mins and offsets are folded into).

struct SbX {
  v: array<vec4<f32>, 16>,     // group g in v[4g .. 4g + 3]
  s: vec4<f32>,                // group g's sum in s[g]
}

fn sb_load_x(sb: u32, part: u32) -> SbX {
  var xs: SbX;
  for (var g = 0u; g < 4u; g++) {
    let col4 = sb_group_col(sb, part, g) / 4u;
    var s = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i++) {
      let v = x_fold(x[x_at + col4 + i], col4 + i);   // shaders/lib/x_plain.wgsl or x_rmsnorm.wgsl
      xs.v[4u * g + i] = v;
      s += v;
    }
    xs.s[g] = (s.x + s.y) + (s.z + s.w);
  }
  return xs;
}
