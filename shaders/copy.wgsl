// copy: dst = src, 16 bytes per invocation. The bench's roofline: the bandwidth a plain copy reaches.
//
// Bindings (group 0):
//   0 src storage, read  array<vec4<u32>> [COUNT]
//   1 dst storage, rw    array<vec4<u32>> [COUNT]
// Dispatch: (gx, gy) with gx·gy·WG ≥ COUNT

override COUNT: u32;             // vec4 words
override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * WG + lid;
  if (i < COUNT) { dst[i] = src[i]; }
}
