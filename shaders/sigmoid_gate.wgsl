// sigmoid_gate: the hybrid's sigmoid gates, in place on y.
//   MODE 0 (gated attention):   y[t, i] = y[t, i] · σ(g[t·GS + i])            i < W
//   MODE 1 (shared expert):     y[t, i] = y[t, i] + σ(g[t·GS]) · x[t, i]      (x: the shared expert's output)
//
// Bindings (declared in src/gpu/kernels/hybrid/sigmoid-gate.ts, which generates their WGSL):
//   step  uniform        Step { n, pos0 }: n = tokens
//   g     storage, read  array<f32> [n, GS] gates
//   x     storage, read  array<f32> [n, W] (MODE 1; MODE 0 does not read it)
//   y     storage, rw    array<f32> [n, W]
// Dispatch: (ceil(W / WG), n)

override W: u32;
override GS: u32;                // row stride of g
override MODE: u32 = 0u;
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let t = gid.y;
  if (i >= W || t >= step.n) { return; }
  if (MODE == 0u) {
    let gv = g[t * GS + i];
    y[t * W + i] = y[t * W + i] * (1.0 / (1.0 + exp(-gv)));
  } else {
    let gv = g[t * GS];
    y[t * W + i] = y[t * W + i] + (1.0 / (1.0 + exp(-gv))) * x[t * W + i];
  }
}
