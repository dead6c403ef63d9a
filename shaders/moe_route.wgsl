// moe_route: Qwen3 MoE routing on the device, HF's Qwen3MoeSparseMoeBlock: for each token, p =
// softmax(router logits) over all E experts, the k largest p (ties: the lower id), divided by their sum
// when norm_topk_prob; written in ascending expert id, the order the experts' outputs are summed in.
//
// One workgroup of WG invocations per token; invocation l owns experts l, l + WG, … (≤ PER of them, in
// registers). The max, the k arg-max rounds and their tie rule are order-free, so they run on workgroup
// atomics over order-preserving u32 keys: a round is one atomicMax of the free experts' p bits (p ≥ 0,
// so its bits order as the values do) and one atomicMin of the ids whose p has exactly those bits (the
// lower id on ties), two barriers whatever E is. The softmax's Σ is a fixed tree in workgroup memory
// (the same bits on every device). The chosen k are then summed in the order they were chosen (largest
// first, as the one-invocation kernel before did) and written by rank, so ids come out ascending.
//
// Bindings (declared in src/gpu/kernels/moe/moe.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   logits  storage, read  array<f32> [n, E] router logits
//   route   storage, rw    array<u32>: ids [max_pairs] then weights (f32 bits) [max_pairs] (the
//                          routing buffer, shaders/lib/job_experts.wgsl); pair t·k + j
//   params  uniform        MoeRoute { num_experts, top_k, norm_topk, max_pairs }
// Dispatch: (n)

const MAX_E: u32 = 512u;
const MAX_K: u32 = 32u;
const WG: u32 = 128u;
const PER: u32 = MAX_E / WG;       // experts an invocation owns at most

var<workgroup> max_key: atomic<u32>;
var<workgroup> best_key: array<atomic<u32>, 2>;   // a round's slots, by round parity
var<workgroup> best_id: array<atomic<u32>, 2>;
var<workgroup> sums: array<f32, WG>;
var<workgroup> chosen_id: array<u32, MAX_K>;
var<workgroup> chosen_p: array<f32, MAX_K>;

// A u32 whose unsigned order is the f32 order of v (negative values flipped whole, positive ones above).
fn order_key(v: f32) -> u32 {
  let b = bitcast<u32>(v);
  return select(b | 0x80000000u, ~b, (b >> 31u) == 1u);
}

fn from_order_key(key: u32) -> f32 {
  return bitcast<f32>(select(~key, key & 0x7fffffffu, (key >> 31u) == 1u));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.x;
  if (t >= step.n) { return; }     // uniform: the whole workgroup returns
  let E = params.num_experts;
  let k = params.top_k;
  let base = t * E;

  if (lid == 0u) {
    atomicStore(&max_key, 0u);
    atomicStore(&best_key[0], 0u); atomicStore(&best_id[0], E);
    atomicStore(&best_key[1], 0u); atomicStore(&best_id[1], E);
  }
  workgroupBarrier();

  var l: array<f32, PER>;
  var mine = 0u;                   // key of this invocation's largest logit (0: owns none)
  for (var r = 0u; r < PER; r++) {
    let i = lid + r * WG;
    if (i < E) {
      l[r] = logits[base + i];
      mine = max(mine, order_key(l[r]));
    }
  }
  if (lid < E) { atomicMax(&max_key, mine); }
  workgroupBarrier();
  let m = from_order_key(atomicLoad(&max_key));

  var p: array<f32, PER>;
  var z = 0.0;
  for (var r = 0u; r < PER; r++) {
    if (lid + r * WG < E) {
      p[r] = exp(l[r] - m);
      z += p[r];
    }
  }
  sums[lid] = z;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { sums[lid] += sums[lid + stride]; }
    workgroupBarrier();
  }
  z = sums[0];
  for (var r = 0u; r < PER; r++) { p[r] = p[r] / z; }

  // k rounds of arg-max over the experts not yet taken (bit r of `taken` is expert lid + r·WG).
  var taken = 0u;
  for (var j = 0u; j < k; j++) {
    let s = j & 1u;
    var key = 0u;
    var has = false;
    for (var r = 0u; r < PER; r++) {
      if (lid + r * WG < E && (taken & (1u << r)) == 0u) {
        key = max(key, bitcast<u32>(p[r]));
        has = true;
      }
    }
    if (has) { atomicMax(&best_key[s], key); }
    workgroupBarrier();
    let kb = atomicLoad(&best_key[s]);
    // the lowest own free id with exactly those bits (ids ascend with r)
    for (var r = 0u; r < PER; r++) {
      if (lid + r * WG < E && (taken & (1u << r)) == 0u && bitcast<u32>(p[r]) == kb) {
        atomicMin(&best_id[s], lid + r * WG);
        break;
      }
    }
    // the other slot was last read before this round's first barrier: reset it for round j + 1
    if (lid == 0u) { atomicStore(&best_key[1u - s], 0u); atomicStore(&best_id[1u - s], E); }
    workgroupBarrier();
    let at = atomicLoad(&best_id[s]);
    if (at % WG == lid) { taken |= 1u << (at / WG); }
    if (lid == 0u) { chosen_id[j] = at; chosen_p[j] = bitcast<f32>(kb); }
  }
  workgroupBarrier();

  // Invocation j < k writes the j-th chosen expert at its rank among the chosen ids.
  if (lid < k) {
    var sum = 0.0;
    for (var j = 0u; j < k; j++) { sum += chosen_p[j]; }   // in the order chosen
    let id = chosen_id[lid];
    var rank = 0u;
    for (var j = 0u; j < k; j++) { rank += select(0u, 1u, chosen_id[j] < id); }
    let pair = t * k + rank;
    let pj = chosen_p[lid];
    route[pair] = id;
    route[params.max_pairs + pair] = bitcast<u32>(select(pj, pj / sum, params.norm_topk != 0u));
  }
}
