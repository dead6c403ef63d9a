// reduce_shared: sum each of the ROWS partial sums over the LANES lanes of each row group (LANES
// consecutive lanes, a power of two) with a tree in workgroup memory; the group's lane 0 gets the sums.
// The fallback where subgroups are missing or a workgroup spans several of them.

var<workgroup> partials: array<f32, MAX_ROWS * WG>;

fn reduce_rows(acc: ptr<function, array<f32, MAX_ROWS>>, lid: u32) {
  if (LANES == 1u) { return; }
  for (var j = 0u; j < ROWS; j++) { partials[j * WG + lid] = (*acc)[j]; }
  workgroupBarrier();
  let lane = lid % LANES;
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      for (var j = 0u; j < ROWS; j++) { partials[j * WG + lid] += partials[j * WG + lid + stride]; }
    }
    workgroupBarrier();
  }
  for (var j = 0u; j < ROWS; j++) { (*acc)[j] = partials[j * WG + lid]; }
}

// One value summed over each row group's LANES lanes the same way (the folded RMSNorm's Σ x²:
// shaders/lib/x_rmsnorm.wgsl); the group's lane 0 gets the sum. Reuses slot 0 of `partials`: every lane
// writes and reads back only its own entry outside the tree, so it may follow or precede reduce_rows.
fn reduce_lanes(v: f32, lid: u32) -> f32 {
  if (LANES == 1u) { return v; }
  workgroupBarrier();
  partials[lid] = v;
  workgroupBarrier();
  let lane = lid % LANES;
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) { partials[lid] += partials[lid + stride]; }
    workgroupBarrier();
  }
  return partials[lid];
}
