// row_sum_subgroup: the sum of one value per invocation over a workgroup of WG (module starts with
// `enable subgroups;`): subgroupAdd in each subgroup, its first lane writes the subgroup's sum to
// workgroup memory, and every invocation adds the WG / size subgroup sums in subgroup order (a fixed order
// on a given device). A 1-D workgroup's subgroups are runs of consecutive invocation indices of equal size
// (so lid / size is the subgroup's index): so on every driver we know; the kernel test checks the result.
// Call from uniform control flow (it holds barriers); every invocation gets the sum.

var<workgroup> row_partials: array<f32, WG>;

fn row_sum(v: f32, lid: u32) -> f32 {
  let s = subgroupAdd(v);
  let size = subgroupAdd(1u);
  if (lid % size == 0u) { row_partials[lid / size] = s; }
  workgroupBarrier();
  var total = 0.0;
  for (var i = 0u; i < WG / size; i++) { total += row_partials[i]; }
  workgroupBarrier();              // every read done before a next call writes
  return total;
}
