// copy: dst = src, 16 bytes per invocation. The bench's roofline: the bandwidth a plain copy reaches.
//
// Bindings (declared in src/gpu/kernels/common/copy.ts, which generates their WGSL):
//   src storage, read  array<vec4<u32>> [COUNT]
//   dst storage, rw    array<vec4<u32>> [COUNT]
// Dispatch: (gx, gy) with gx·gy·WG ≥ COUNT

override COUNT: u32;             // vec4 words
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * WG + lid;
  if (i < COUNT) { dst[i] = src[i]; }
}
