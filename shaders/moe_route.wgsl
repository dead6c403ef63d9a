// moe_route: Qwen3 MoE routing on the device, HF's Qwen3MoeSparseMoeBlock: for each token, p =
// softmax(router logits) over all E experts, the k largest p (ties: the lower id), divided by their sum
// when norm_topk_prob; written in ascending expert id, the order the experts' outputs are summed in.
// One invocation per token (E ≤ MAX_E, k ≤ MAX_K): E exps and k passes over E, small beside a matvec.
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

var<workgroup> probs: array<f32, MAX_E>;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
  let t = wid.x;
  if (t >= step.n) { return; }
  let E = params.num_experts;
  let k = params.top_k;
  let base = t * E;
  var m = logits[base];
  for (var i = 1u; i < E; i++) { m = max(m, logits[base + i]); }
  var z = 0.0;
  for (var i = 0u; i < E; i++) {
    let e = exp(logits[base + i] - m);
    probs[i] = e;
    z += e;
  }
  for (var i = 0u; i < E; i++) { probs[i] = probs[i] / z; }

  // k passes: the largest p not yet taken; a strict > keeps the lower id on ties.
  var ids: array<u32, MAX_K>;
  var ps: array<f32, MAX_K>;
  var taken: array<u32, MAX_E / 32u>;
  for (var w = 0u; w < MAX_E / 32u; w++) { taken[w] = 0u; }
  var sum = 0.0;
  for (var j = 0u; j < k; j++) {
    var best = -1.0;
    var at = E;
    for (var i = 0u; i < E; i++) {
      let free = (taken[i >> 5u] & (1u << (i & 31u))) == 0u;
      if (free && (probs[i] > best || at == E)) { best = probs[i]; at = i; }
    }
    taken[at >> 5u] |= 1u << (at & 31u);
    ids[j] = at;
    ps[j] = best;
    sum += best;
  }
  // ascending expert id (insertion sort of k ≤ MAX_K)
  for (var j = 1u; j < k; j++) {
    let id = ids[j];
    let p = ps[j];
    var i = j;
    while (i > 0u && ids[i - 1u] > id) {
      ids[i] = ids[i - 1u];
      ps[i] = ps[i - 1u];
      i--;
    }
    ids[i] = id;
    ps[i] = p;
  }
  for (var j = 0u; j < k; j++) {
    let pair = t * k + j;
    route[pair] = ids[j];
    route[params.max_pairs + pair] = bitcast<u32>(select(ps[j], ps[j] / sum, params.norm_topk != 0u));
  }
}
