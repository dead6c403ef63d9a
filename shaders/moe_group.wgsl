// moe_group: prefill groups tokens by expert on the device. From the step's pairs (token t's j-th expert
// is pair t·k + j, ids from shaders/moe_route.wgsl) it writes where each expert's pairs start and the
// pairs grouped by expert, each group in pair order — so every expert runs once, as one matmul over
// its tokens, and reads only its own rows. One workgroup: lanes count the pairs of experts lid,
// lid + WG, …; lane 0 scans the counts; the lanes write their experts' groups.
//
// Bindings (declared in src/gpu/kernels/moe/moe.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   route   storage, rw    array<u32>, the routing buffer (shaders/lib/job_experts.wgsl): reads ids
//                          [0, n·k), writes starts [2P, 2P + E] and groups [2P + E + 1, + n·k)
//   params  uniform        MoeRoute { num_experts, top_k, norm_topk, max_pairs }
// Dispatch: (1)

const MAX_E: u32 = 512u;
override WG: u32 = 64u;

var<workgroup> starts: array<u32, MAX_E + 1u>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let E = params.num_experts;
  let pairs = step.n * params.top_k;
  let P = params.max_pairs;
  for (var e = lid; e < E; e += WG) {
    var c = 0u;
    for (var p = 0u; p < pairs; p++) { c += select(0u, 1u, route[p] == e); }
    starts[e] = c;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var acc = 0u;
    for (var e = 0u; e < E; e++) {
      let c = starts[e];
      starts[e] = acc;
      route[2u * P + e] = acc;
      acc += c;
    }
    starts[E] = acc;
    route[2u * P + E] = acc;
  }
  workgroupBarrier();
  for (var e = lid; e < E; e += WG) {
    var at = 2u * P + E + 1u + starts[e];
    for (var p = 0u; p < pairs; p++) {
      if (route[p] == e) {
        route[at] = p;
        at++;
      }
    }
  }
}
