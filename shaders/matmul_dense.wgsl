// matmul_dense: y = x · Wᵀ for a dense F32 / F16 / BF16 weight W (one row chunk), with a fused epilogue.
// LANES invocations share a row (WG / LANES rows per workgroup; the host picks LANES from K). Decode
// (TILE_T = 1) is a matvec; prefill (TILE_T > 1) reuses every decoded weight word for TILE_T tokens.
//
// Bindings (declared in src/gpu/kernels/matmul-dense.ts, which generates their WGSL):
//   step   uniform             Step { n, pos0 }: n = tokens (rows of x and y) in this step
//   weight storage, read       array<u32> [rows, row_words]: F32 one value a word; F16/BF16 two a word,
//                                element 2i in the low half, rows padded to a whole vec4 (zeros)
//   x      storage, read       array<f32> [n, k]
//   y      storage, read_write array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk  uniform             Chunk { k, out_stride, row_offset, out_rows, epilogue }
// epilogue (codes from src/gpu/kernels/linear-contract.ts): STORE y = acc; ADD_RESIDUAL y += acc;
// SILU_GATE_UP y[r] = silu(acc[r])·acc[r + out_rows] (gate rows, then up rows).
// Dispatch: (gx, gy, ceil(n / TILE_T)) with gx·gy ≥ ceil(out_rows / (WG / LANES)) workgroups of WG.

override WDTYPE: u32;            // 0 F32, 1 F16, 2 BF16
override TILE_T: u32 = 1u;       // tokens per workgroup: 1 (decode, scalar) or 4 (prefill, vec4)
override LANES: u32 = 64u;       // invocations per row: a power of two dividing WG
override WG: u32 = 64u;

const MAX_ACC: u32 = 8u;         // (gate, up) × 4 tokens
var<workgroup> partial: array<f32, WG * MAX_ACC>;

// Two consecutive elements of a word (the second is 0 for F32, whose word holds one element).
fn decode_word(w: u32) -> vec2<f32> {
  if (WDTYPE == 0u) { return vec2<f32>(bitcast<f32>(w), 0.0); }
  if (WDTYPE == 1u) { return unpack_f16x2(w); }
  return unpack_bf16x2(w);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let kdim = chunk.k;
  let out_stride = chunk.out_stride;
  let out_rows = chunk.out_rows;
  let row_offset = chunk.row_offset;
  let epilogue = chunk.epilogue;
  let per_word = select(2u, 1u, WDTYPE == 0u);
  let row_words = ((kdim + 4u * per_word - 1u) / (4u * per_word)) * 4u;   // rows padded to whole vec4s
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
      for (var w = lane; w < row_words; w += LANES) {
        let wv = decode_word(weight[w_row * row_words + w]);
        let k0 = w * per_word;
        let k1 = min(k0 + 1u, kdim - 1u);      // odd K: the padding weight is 0, x stays in its row
        let w1 = select(0.0, wv.y, per_word == 2u && k0 + 1u < kdim);
        if (TILE_T == 1u) {
          acc[s].x += wv.x * x[xr.x + k0] + w1 * x[xr.x + k1];
        } else {
          acc[s] += wv.x * vec4<f32>(x[xr.x + k0], x[xr.y + k0], x[xr.z + k0], x[xr.w + k0])
                  + w1 * vec4<f32>(x[xr.x + k1], x[xr.y + k1], x[xr.z + k1], x[xr.w + k1]);
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
