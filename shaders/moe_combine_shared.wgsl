// moe_combine_shared: Qwen3.5 MoE's sparse MLP output added to the residual stream: the routed experts'
// weighted sum (as shaders/moe_combine.wgsl) plus the shared expert gated by σ(shared_expert_gate · hn):
//   x[t] += (Σ_j w_j · y[t·k + j]) + σ(g[t]) · s[t]
// each product rounded to f32, the routed sum from 0 in ascending expert id, then the shared term, then
// the residual — the reference's order (src/model/reference/hybrid-layer.ts moeFfn).
//
// Bindings (declared in src/gpu/kernels/moe/moe.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   route   storage, read  array<u32>, the routing buffer: weights (f32 bits) at [max_pairs + pair]
//   ye      storage, read  array<f32> [n·k, H] each pair's expert output
//   sx      storage, read  array<f32> [n, H] the shared expert's output
//   sgate   storage, read  array<f32> [n] the shared expert's gate logit
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
  var s = routed_sum(t, h);   // shaders/lib/moe_routed_sum.wgsl
  let gate = 1.0 / (1.0 + exp(-sgate[t]));
  let sh = gate * sx[t * H + h];
  s = s + sh;
  x[t * H + h] = x[t * H + h] + s;
}
