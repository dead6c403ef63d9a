// gated_rmsnorm: the output norm of a Gated DeltaNet layer (HF Qwen3_5RMSNormGated), per value head:
//   y = o / √(mean(o²) + EPS) · weight · silu(z)      (weight is a plain weight, not 1 + w)
//
// Bindings (declared in src/gpu/kernels/hybrid/gated-rmsnorm.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   o      storage, read  array<f32> [n, NV·DV]
//   z      storage, read  array<f32> [n, ZS]: the gate of head j at columns ZOFF + j·DV ..
//   weight storage, read  array<f32> [DV]
//   y      storage, rw    array<f32> [n, NV·DV]
// Dispatch: (NV, n)

override NV: u32;
override DV: u32;
override ZS: u32;                // row stride of z
override ZOFF: u32;              // column of head 0's gate in a z row
override EPS: f32;
override WG: u32 = 64u;          // power of two

var<workgroup> sums: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wid.x;
  let t = wid.y;
  let base = (t * NV + j) * DV;
  var ss = 0.0;
  for (var c = lid; c < DV; c += WG) { let v = o[base + c]; ss += v * v; }
  sums[lid] = ss;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { sums[lid] += sums[lid + stride]; }
    workgroupBarrier();
  }
  let inv = 1.0 / sqrt(sums[0] / f32(DV) + EPS);
  for (var c = lid; c < DV; c += WG) {
    let g = z[t * ZS + ZOFF + j * DV + c];
    y[base + c] = o[base + c] * inv * weight[c] * (g / (1.0 + exp(-g)));
  }
}
