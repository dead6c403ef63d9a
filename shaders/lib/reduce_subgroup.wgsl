// reduce_subgroup: sum each of the ROWS partial sums over the LANES lanes of each row group (module
// starts with `enable subgroups;`): subgroupAdd when a group is the whole workgroup, else a butterfly of
// subgroupShuffleXor. Valid only when each row group's LANES lanes are consecutive lanes of one subgroup
// (LANES = WG: the workgroup is one subgroup): the host picks this variant with LANES ≤ the adapter's
// smallest subgroup size (a workgroup may hold several subgroups, a row group in each), and the start-up
// tuning checks the result.

fn reduce_rows(acc: ptr<function, array<f32, MAX_ROWS>>, lid: u32) {
  if (LANES == 1u) { return; }
  if (LANES == WG) {
    for (var j = 0u; j < ROWS; j++) { (*acc)[j] = subgroupAdd((*acc)[j]); }
    return;
  }
  for (var mask = LANES / 2u; mask > 0u; mask /= 2u) {
    for (var j = 0u; j < ROWS; j++) { (*acc)[j] += subgroupShuffleXor((*acc)[j], mask); }
  }
}

// One value summed over each row group's LANES lanes the same way (the folded RMSNorm's Σ x²:
// shaders/lib/x_rmsnorm.wgsl); the group's lane 0 gets the sum.
fn reduce_lanes(v: f32, lid: u32) -> f32 {
  if (LANES == 1u) { return v; }
  if (LANES == WG) { return subgroupAdd(v); }
  var s = v;
  for (var mask = LANES / 2u; mask > 0u; mask /= 2u) { s += subgroupShuffleXor(s, mask); }
  return s;
}
