// rows_x_subgroup: x for the SIMD-rasterizer prefill matmul (shaders/matmul_rows.wgsl) shared by
// subgroup operations (module starts with `enable subgroups;`). Lane l of the subgroup loads element
// k0 + l of a part (XL = 8 lanes: one load each; XL = 4: two, k0 + l and k0 + 4 + l) and the part's 8
// values reach every lane by subgroupBroadcast. A CPU rasterizer runs a storage load as a loop over its
// SIMD lanes, whether or not their addresses agree: this way each loop fetches 8 different values.
// Valid when every subgroup of the workgroup has at least XL lanes (the host picks this variant with
// WG = the adapter's smallest subgroup size, ≥ 4, and the start-up tuning checks the results).

override XL: u32 = min(WG, 8u);  // lanes holding a part's values: 8, or 4 (twice)

fn x_at(base: u32, k: u32, tail: bool) -> f32 {
  let kdim = chunk.k;
  if (tail) { return select(0.0, x[base + min(k, kdim - 1u)], k < kdim); }
  return x[base + k];
}

// x[xrow, k0 .. k0 + 7], zero past k when `tail` (only a dense weight's last block can pass k).
fn x_part(xrow: u32, k0: u32, tail: bool, lane: u32) -> array<vec4<f32>, 2> {
  let base = xrow * chunk.k;
  let l = lane % XL;
  let a = x_at(base, k0 + l, tail);
  let lo = vec4<f32>(subgroupBroadcast(a, 0u), subgroupBroadcast(a, 1u), subgroupBroadcast(a, 2u), subgroupBroadcast(a, 3u));
  if (XL == 8u) {
    return array<vec4<f32>, 2>(lo, vec4<f32>(subgroupBroadcast(a, 4u), subgroupBroadcast(a, 5u), subgroupBroadcast(a, 6u), subgroupBroadcast(a, 7u)));
  }
  let b = x_at(base, k0 + 4u + l, tail);
  return array<vec4<f32>, 2>(lo, vec4<f32>(subgroupBroadcast(b, 0u), subgroupBroadcast(b, 1u), subgroupBroadcast(b, 2u), subgroupBroadcast(b, 3u)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32) {
  rows_main(wid, nwg, lid, lane);
}
