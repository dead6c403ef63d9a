// best_candidate: the one candidate order of topk_blocks, pick_best and sample_pick, which must agree with
// each other and with the CPU (src/model/sampler.ts, src/gpu/candidates.ts): larger value first, ties to
// the lower id; NONE (0xffffffff, an empty slot) never beats anything. And the workgroup's best of every
// lane's (value, id) by a tree in workgroup memory. Uses the including kernel's `override WG` (a power of two).

const NONE: u32 = 0xffffffffu;
var<workgroup> red_val: array<f32, WG>;
var<workgroup> red_id: array<u32, WG>;

// a beats b: larger value, ties to the lower id; NONE never beats anything.
fn beats(av: f32, ai: u32, bv: f32, bi: u32) -> bool {
  if (ai == NONE) { return false; }
  if (bi == NONE) { return true; }
  return av > bv || (av == bv && ai < bi);
}

// The workgroup's best of every lane's (bv, bi), left in red_val[0], red_id[0]; returns the winning id.
// Every lane must call it (it has barriers).
fn reduce_best(lid: u32, bv: f32, bi: u32) -> u32 {
  red_val[lid] = bv;
  red_id[lid] = bi;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride && beats(red_val[lid + stride], red_id[lid + stride], red_val[lid], red_id[lid])) {
      red_val[lid] = red_val[lid + stride];
      red_id[lid] = red_id[lid + stride];
    }
    workgroupBarrier();
  }
  return red_id[0];
}
