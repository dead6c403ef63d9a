// row_sum_shared: the sum of one value per invocation over a workgroup of WG (a power of two) by a tree
// in workgroup memory, log2(WG) barriers. The fallback where subgroups are missing.
// Call from uniform control flow (it holds barriers); every invocation gets the sum.

var<workgroup> row_partials: array<f32, WG>;

fn row_sum(v: f32, lid: u32) -> f32 {
  row_partials[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { row_partials[lid] += row_partials[lid + stride]; }
    workgroupBarrier();
  }
  let total = row_partials[0];
  workgroupBarrier();              // every read done before a next call writes
  return total;
}
