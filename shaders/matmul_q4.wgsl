// matmul_q4: y = x · Wᵀ for an MLC q4f16_1 weight W (one row chunk of it), with a fused epilogue.
// LANES invocations share a row (WG / LANES rows per workgroup; the host picks LANES from K so small and
// large K both keep every invocation busy). Decode (TILE_T = 1) is a matvec; prefill (TILE_T > 1) reuses
// every decoded weight for TILE_T tokens: a skinny matmul reading the weight once per TILE_T tokens.
//
// Bindings (declared in src/gpu/kernels/matmul-q4.ts, which generates their WGSL):
//   step    uniform             Step { n, pos0 }: n = tokens (rows of x and y) in this step
//   qweight storage, read       array<u32> [rows, k/8]; element k at bits (k%8)*4 of word k/8
//   scales  storage, read       array<u32> f16 pairs of [rows, k/32]; w = (q − 7)·scale
//   x       storage, read       array<f32> [n, k]
//   y       storage, read_write array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk   uniform             Chunk { k, out_stride, row_offset, out_rows, epilogue }
// epilogue (codes from src/gpu/kernels/linear-contract.ts): STORE y = acc; ADD_RESIDUAL y += acc;
// SILU_GATE_UP y[r] = silu(acc[r])·acc[r + out_rows] (gate rows, then up rows).
// Dispatch: (gx, gy, ceil(n / TILE_T)) with gx·gy ≥ ceil(out_rows / (WG / LANES)) workgroups of WG.

override TILE_T: u32 = 1u;       // tokens per workgroup: 1 (decode, scalar) or 4 (prefill, vec4)
override LANES: u32 = 64u;       // invocations per row: a power of two dividing WG
override WG: u32 = 64u;

const MAX_ACC: u32 = 8u;         // (gate, up) × 4 tokens
var<workgroup> partial: array<f32, WG * MAX_ACC>;

fn scale_at(i: u32) -> f32 {
  let pair = unpack_f16x2(scales[i >> 1u]);
  return select(pair.x, pair.y, (i & 1u) == 1u);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let kdim = chunk.k;
  let out_stride = chunk.out_stride;
  let out_rows = chunk.out_rows;
  let row_offset = chunk.row_offset;
  let epilogue = chunk.epilogue;
  let words = kdim / 8u;
  let groups = kdim / 32u;
  let fused = select(1u, 2u, epilogue == SILU_GATE_UP);
  let lane = lid % LANES;
  let out_row = (wid.y * nwg.x + wid.x) * (WG / LANES) + lid / LANES;
  let t0 = wid.z * TILE_T;
  let n = step.n;

  // acc[s] = sums for tokens t0 .. t0 + 3 (s = 0 gate / plain, 1 up); rows of x past n are clamped to
  // the last token (read, then discarded), so the inner loop has no branches.
  var acc = array<vec4<f32>, 2>(vec4<f32>(0.0), vec4<f32>(0.0));
  let last = n - 1u;
  let xr = vec4<u32>(min(t0, last), min(t0 + 1u, last), min(t0 + 2u, last), min(t0 + 3u, last)) * kdim;
  if (out_row < out_rows) {
    for (var s = 0u; s < fused; s++) {
      let w_row = out_row + s * out_rows;    // up rows follow the gate rows
      for (var w = lane; w < words; w += LANES) {
        let q = qweight[w_row * words + w];
        let sc = scale_at(w_row * groups + w / 4u);
        var wv: array<f32, 8>;
        for (var j = 0u; j < 8u; j++) { wv[j] = (f32((q >> (4u * j)) & 0xfu) - 7.0) * sc; }
        let k0 = w * 8u;
        if (TILE_T == 1u) {
          var dot = 0.0;
          for (var j = 0u; j < 8u; j++) { dot += wv[j] * x[xr.x + k0 + j]; }
          acc[s].x += dot;
        } else {
          for (var j = 0u; j < 8u; j++) {
            let kk = k0 + j;
            acc[s] += wv[j] * vec4<f32>(x[xr.x + kk], x[xr.y + kk], x[xr.z + kk], x[xr.w + kk]);
          }
        }
      }
    }
  }

  for (var s = 0u; s < fused; s++) {
    for (var t = 0u; t < TILE_T; t++) { partial[(s * 4u + t) * WG + lid] = acc[s][t]; }
  }
  workgroupBarrier();

  if (lane != 0u || out_row >= out_rows) { return; }
  for (var t = 0u; t < TILE_T; t++) {
    let tok = t0 + t;
    if (tok >= n) { break; }
    var sum = 0.0;
    var up = 0.0;
    for (var l = 0u; l < LANES; l++) {
      sum += partial[t * WG + lid + l];
      if (epilogue == SILU_GATE_UP) { up += partial[(4u + t) * WG + lid + l]; }
    }
    let at = tok * out_stride + row_offset + out_row;
    if (epilogue == SILU_GATE_UP) {
      y[at] = sum / (1.0 + exp(-sum)) * up;   // silu(gate) · up
    } else if (epilogue == ADD_RESIDUAL) {
      y[at] = y[at] + sum;
    } else {
      y[at] = sum;
    }
  }
}
