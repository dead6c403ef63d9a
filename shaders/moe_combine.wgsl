// moe_combine: the sparse MLP's output added to the residual stream: for token t,
// x[t] += Σ_j w_j · y[t·k + j] over its k experts in ascending id (the routing order), each product
// rounded to f32 before it is added, from 0 — the reference's order (src/model/reference/moe.ts).
//
// Bindings (declared in src/gpu/kernels/moe/moe.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   route   storage, read  array<u32>, the routing buffer: weights (f32 bits) at [max_pairs + pair]
//   ye      storage, read  array<f32> [n·k, H] each pair's expert output
//   x       storage, rw    array<f32> [n, H] residual stream
//   params  uniform        MoeRoute { num_experts, top_k, norm_topk, max_pairs }
// Dispatch: (ceil(H / WG), n)

override H: u32;
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.y;
  let h = wid.x * WG + lid;
  if (t >= step.n || h >= H) { return; }
  let s = routed_sum(t, h);   // shaders/lib/moe_routed_sum.wgsl
  x[t * H + h] = x[t * H + h] + s;
}
