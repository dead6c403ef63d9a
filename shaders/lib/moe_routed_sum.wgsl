// The routed experts' share of hidden value h of token t, shared by moe_combine and moe_combine_shared:
// Σ_j weight(t, j) · ye[(t·k + j)·H + h] over the token's k experts, in expert-slot order (the order the
// reference sums in), the weights at route[max_pairs ..] as f32 bits. Uses the kernel's H, route, ye, params.

fn routed_sum(t: u32, h: u32) -> f32 {
  let k = params.top_k;
  var s = 0.0;
  for (var j = 0u; j < k; j++) {
    let pair = t * k + j;
    let term = bitcast<f32>(route[params.max_pairs + pair]) * ye[pair * H + h];
    s = s + term;
  }
  return s;
}
