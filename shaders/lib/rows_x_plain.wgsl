// rows_x_plain: x for the SIMD-rasterizer prefill matmul (shaders/matmul_rows.wgsl) without
// subgroups: every lane reads all 8 values of a part itself (one address across the lanes).

// x[xrow, k0 .. k0 + 7], zero past k when `tail` (only a dense weight's last block can pass k).
fn x_part(xrow: u32, k0: u32, tail: bool, lane: u32) -> array<vec4<f32>, 2> {
  let kdim = chunk.k;
  let base = xrow * kdim;
  var v: array<f32, 8>;
  for (var e = 0u; e < 8u; e++) {
    if (tail) { v[e] = select(0.0, x[base + min(k0 + e, kdim - 1u)], k0 + e < kdim); }
    else { v[e] = x[base + k0 + e]; }
  }
  return array<vec4<f32>, 2>(vec4<f32>(v[0], v[1], v[2], v[3]), vec4<f32>(v[4], v[5], v[6], v[7]));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  rows_main(wid, nwg, lid, 0u);
}
