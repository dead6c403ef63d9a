// rmsnorm: y = x / sqrt(mean(x²) + EPS) · weight, one workgroup per row.
//
// Bindings (declared in src/gpu/kernels/common/rmsnorm.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = rows
//   x      storage, read  array<f32> [n, H]
//   weight storage, read  array<f32> [H]
//   y      storage, rw    array<f32> [n, H]
// Dispatch: (n)

override H: u32;
override EPS: f32;
override WG: u32 = 64u;          // power of two

var<workgroup> sums: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  let base = row * H;
  var ss = 0.0;
  for (var i = lid; i < H; i += WG) { let v = x[base + i]; ss += v * v; }
  sums[lid] = ss;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { sums[lid] += sums[lid + stride]; }
    workgroupBarrier();
  }
  let inv = 1.0 / sqrt(sums[0] / f32(H) + EPS);
  for (var i = lid; i < H; i += WG) { y[base + i] = x[base + i] * inv * weight[i]; }
}
