// silu_mul: out[t, i] = silu(gu[t, i]) · gu[t, I + i]; used when the gate|up weight is split across
// buffers, or MoE experts' gate and up differ in format (otherwise it is fused into the matvec epilogue).
//
// Bindings (declared in src/gpu/kernels/common/silu-mul.ts, which generates their WGSL):
//   step  uniform        Step { n, pos0 }: n = tokens
//   gu    storage, read  array<f32> [n·ROWS, 2·I] (gate I values, then up I values)
//   out   storage, rw    array<f32> [n·ROWS, I]
// Dispatch: (ceil(I / WG), n·ROWS)

override I: u32;
override ROWS: u32 = 1u;         // rows per token (MoE: its k expert pairs)
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let t = gid.y;
  if (i >= I || t >= step.n * ROWS) { return; }
  let g = gu[t * 2u * I + i];
  out[t * I + i] = g / (1.0 + exp(-g)) * gu[t * 2u * I + I + i];
}
