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
