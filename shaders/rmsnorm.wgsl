// rmsnorm: y = x / sqrt(mean(x²) + EPS) · weight, one workgroup per row.
// A decode step is one row, so the whole row is one workgroup: WG is large (256 on GPUs) so its loads run
// wide, each invocation adds its strided share of x² and row_sum (shaders/lib/row_sum_subgroup.wgsl or
// row_sum_shared.wgsl) adds the shares.
//
// Bindings (declared in src/gpu/kernels/common/rmsnorm.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = rows
//   x      storage, read  array<f32> [n, H]
//   weight storage, read  array<f32> [H]
//   y      storage, rw    array<f32> [n, H]
// Dispatch: (n)

override H: u32;
override EPS: f32;
override WG: u32 = 256u;         // power of two

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  let base = row * H;
  var ss = 0.0;
  for (var i = lid; i < H; i += WG) { let v = x[base + i]; ss += v * v; }
  let inv = 1.0 / sqrt(row_sum(ss, lid) / f32(H) + EPS);
  for (var i = lid; i < H; i += WG) { y[base + i] = x[base + i] * inv * weight[i]; }
}
