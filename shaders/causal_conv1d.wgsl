// causal_conv1d: Gated DeltaNet's depthwise causal conv over the q|k|v channels, then SiLU, continuing
// the layer's rolling conv state (HF causal_conv1d_update). One invocation per channel walks the step's
// tokens in order, so a prompt cut anywhere gives the same values as one token at a time.
//   u = state ++ x;  y[t][c] = silu(Σ_j weight[c][j] · u[t + j][c]), j ascending;  state = last K−1 rows of u
//
// Bindings (declared in src/gpu/kernels/hybrid/causal-conv1d.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   x      storage, read  array<f32> [n, XS]: the first C columns of each row are this step's q|k|v
//   weight storage, read  array<f32> [C, K] taps, tap K−1 weighs the current token
//   state  storage, rw    array<f32> [K−1, C] the previous K−1 inputs, oldest first
//   y      storage, rw    array<f32> [n, C]
// Dispatch: (ceil(C / WG))

override C: u32;
override K: u32;                 // 2 ≤ K ≤ MAX_K
override XS: u32;                // row stride of x
override WG: u32 = 64u;

const MAX_K: u32 = 8u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let c = gid.x;
  if (c >= C) { return; }
  var win: array<f32, MAX_K>;    // win[0 .. K−2]: the inputs before this token, oldest first
  for (var j = 0u; j + 1u < K; j++) { win[j] = state[j * C + c]; }
  for (var t = 0u; t < step.n; t++) {
    let xt = x[t * XS + c];
    var acc = 0.0;
    for (var j = 0u; j + 1u < K; j++) { acc += weight[c * K + j] * win[j]; }
    acc += weight[c * K + K - 1u] * xt;
    y[t * C + c] = acc / (1.0 + exp(-acc));
    for (var j = 0u; j + 2u < K; j++) { win[j] = win[j + 1u]; }
    win[K - 2u] = xt;
  }
  for (var j = 0u; j + 1u < K; j++) { state[j * C + c] = win[j]; }
}
