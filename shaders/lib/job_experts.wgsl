// job_experts: the job of a linear kernel's workgroup for stacked MoE experts (a chunk holds experts
// [e0, e1), rows_per_expert rows each; expert e's rows start at (e − e0)·rows_per_expert). The routing
// buffer (written by shaders/moe_route.wgsl and moe_group.wgsl) for a step of n tokens, k experts each,
// P = max_pairs (maxBatch·k) and pair p = t·k + j (token t's j-th expert, in ascending id):
//   route[p]                      expert id of pair p                 [P]
//   route[P + p]                  its weight (f32 bits)               [P]
//   route[2P + e]                 first place of expert e in perm     [E + 1]
//   route[2P + E + 1 + i]         pairs grouped by expert, in order   [n·k]
// A pair's x row is p / x_div (gate|up read the token's row: x_div = k; down reads the pair's row: 1)
// and its y row is p. Decode (one token): workgroup (row group, slot wid.y) takes pair wid.y and counts
// the weight bytes it reads (rows × the chunk's stored row_bytes) in bytes_read[counter_base + e]. Prefill: workgroup (row tile, expert e0 + wid.y,
// token tile wid.z) takes that expert's pairs.

struct Job {
  index: u32,
  live: bool,
  row_base: u32,
  x_base: u32,
  y_base: u32,
  tokens: u32,
}

var<private> job_expert: u32;
var<private> job_first: u32;     // prefill: the job's first place in perm

fn route_start(e: u32) -> u32 {
  return route[2u * experts.max_pairs + e];
}

fn decode_job(wid: vec3<u32>, nwg: vec3<u32>) -> Job {
  let pair = wid.y;
  let e = route[pair];
  job_expert = e;
  let live = e >= experts.e0 && e < experts.e1;
  return Job(wid.x, live, (e - experts.e0) * experts.rows_per_expert,     // (wraps when not live: unused)
    (pair / experts.x_div) * chunk.k, pair * chunk.out_stride, 1u);
}

// The token count goes through workgroup memory so that it is uniform: the tiled matmul returns early
// on it and then meets barriers (a value read from a storage buffer is not uniform to WGSL).
var<workgroup> job_tokens: u32;

fn prefill_job(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> Job {
  let e = experts.e0 + wid.y;                              // < e1: the grid's y is the chunk's experts
  job_expert = e;
  job_first = route_start(e);
  if (lid == 0u) { job_tokens = route_start(e + 1u) - job_first; }
  let tokens = workgroupUniformLoad(&job_tokens);
  return Job(wid.x, e < experts.e1, wid.y * experts.rows_per_expert, 0u, 0u, tokens);
}

fn pair_of(t: u32) -> u32 {
  return route[2u * experts.max_pairs + experts.num_experts + 1u + job_first + t];
}

fn x_row(t: u32) -> u32 { return pair_of(t) / experts.x_div; }
fn y_row(t: u32) -> u32 { return pair_of(t); }

fn rows_read(job: Job, rows: u32) {
  atomicAdd(&bytes_read[experts.counter_base + job_expert], rows * experts.row_bytes);   // wraps at 4 GiB: read with a reset
}
