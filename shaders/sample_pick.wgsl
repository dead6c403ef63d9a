// sample_pick: a sampled pick over topk_blocks' per-block candidates (TOPK = k), written as the next token
// id, so the embedding gather that follows in the same submit feeds it without a read-back (the sampling
// twin of pick_best). It follows src/model/sampler.ts step 3 in f32, where the CPU works in doubles: the
// caller reads the candidates back with the pick and redoes the rare pick the two disagree on.
//   1. the global top-k: each block's list is already best first (larger value, ties to the lower id;
//      id 0xffffffff = none, only at a list's end), so k rounds of a merge over the blocks' heads;
//   2. w_i = exp((v_i − v_0) / T), top-p keeps the shortest prefix with Σ w_i / Σ w ≥ top_p (off at 1);
//   3. the first kept candidate whose running Σ w exceeds u · (Σ kept w); u from the CPU's PRNG.
//
// Bindings (declared in src/gpu/kernels/sampling/sample-pick.ts, which generates their WGSL):
//   params uniform       Params { k, temperature, top_p, u } (the last three: f32 bits)
//   best   storage, read array<vec2<u32>> [BLOCKS, k]: (f32 bits, id) from topk_blocks
//   ids    storage, rw   array<u32> [≥ 1]: ids[0] = the pick (0xffffffff when no block has a candidate)
//   out    storage, rw   array<u32> [4 + 2·64]: pick, candidates found (≤ k), kept after top-p, 0,
//                        then the global top-k as (f32 bits, id) pairs, best first
// Dispatch: (1)

override BLOCKS: u32;
override WG: u32 = 64u;          // power of two, WG · MAX_LANE_BLOCKS ≥ BLOCKS

const MAX_K: u32 = 64u;
const MAX_LANE_BLOCKS: u32 = 128u;
// NONE, beats and reduce_best: shaders/lib/best_candidate.wgsl.

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let k = min(params.k, MAX_K);
  // this lane's blocks are lid + j·WG; head[j] = how many of block j's candidates were taken
  var head: array<u32, MAX_LANE_BLOCKS>;
  for (var j = 0u; j < MAX_LANE_BLOCKS; j++) { head[j] = 0u; }
  var sel_val: array<f32, MAX_K>;   // lane 0's copy of the merged top-k
  var sel_id: array<u32, MAX_K>;
  var found = 0u;
  for (var r = 0u; r < k; r++) {
    var bv = 0.0;
    var bi = NONE;
    var bj = 0u;
    for (var j = 0u; j < MAX_LANE_BLOCKS; j++) {
      let b = lid + j * WG;
      if (b >= BLOCKS) { break; }
      if (head[j] < k) {
        let pair = best[b * k + head[j]];
        let v = bitcast<f32>(pair.x);
        if (beats(v, pair.y, bv, bi)) { bv = v; bi = pair.y; bj = j; }
      }
    }
    let win_id = reduce_best(lid, bv, bi);
    let win_val = red_val[0];
    if (bi != NONE && bi == win_id) { head[bj] += 1u; }   // the owner of the winner's block moves past it
    if (lid == 0u && win_id != NONE) { sel_val[found] = win_val; sel_id[found] = win_id; found += 1u; }
    workgroupBarrier();
  }
  if (lid != 0u) { return; }

  let temperature = bitcast<f32>(params.temperature);
  let top_p = bitcast<f32>(params.top_p);
  let u = bitcast<f32>(params.u);
  var w: array<f32, MAX_K>;
  var all = 0.0;
  for (var i = 0u; i < found; i++) {
    w[i] = exp((sel_val[i] - sel_val[0]) / temperature);
    all += w[i];
  }
  var kept = found;
  if (top_p < 1.0) {
    var running = 0.0;
    for (var i = 0u; i < found; i++) {
      running += w[i] / all;
      if (running >= top_p) { kept = i + 1u; break; }
    }
  }
  var total = 0.0;
  for (var i = 0u; i < kept; i++) { total += w[i]; }
  let goal = u * total;
  var pick = NONE;
  if (found > 0u) {
    pick = sel_id[kept - 1u];
    var running = 0.0;
    for (var i = 0u; i < kept; i++) {
      running += w[i];
      if (running > goal) { pick = sel_id[i]; break; }
    }
  }
  ids[0] = pick;
  out[0] = pick;
  out[1] = found;
  out[2] = kept;
  out[3] = 0u;
  for (var i = 0u; i < found; i++) {
    out[4u + 2u * i] = bitcast<u32>(sel_val[i]);
    out[5u + 2u * i] = sel_id[i];
  }
}
