// matvec_q4: y = x · Wᵀ for an MLC q4f16_1 weight W (one row chunk of it), with a fused epilogue.
// Decode (TILE_T = 1) is a matvec; prefill (TILE_T > 1) reuses every decoded weight for TILE_T tokens,
// a skinny matmul that reads the weight once per TILE_T tokens.
//
// Bindings (group 0):
//   0 step    uniform             Step { n, pos0 }: n = tokens (rows of x and y) in this step
//   1 qweight storage, read       array<u32> [N_ROWS, K/8]; element k at bits (k%8)*4 of word k/8
//   2 scales  storage, read       array<u32> f16 pairs of [N_ROWS, K/32]; w = (q − 7)·scale
//   3 x       storage, read       array<f32> [n, K]
//   4 y       storage, read_write array<f32> [n, OUT_STRIDE]; this chunk writes columns row_offset + r
//   5 chunk  uniform             Chunk { k, out_stride, row_offset, out_rows, epilogue }
// epilogue: 0 y = acc; 1 y += acc (residual); 2 y[r] = silu(acc[r])·acc[r + out_rows] (gate|up rows).
// Dispatch: (gx, gy, ceil(n / TILE_T)) with gx·gy ≥ ceil(out_rows / ROWS_PER_WG) workgroups of WG.

override TILE_T: u32 = 1u;       // tokens per workgroup (ROWS_PER_WG · TILE_T · 2 ≤ 32)
override ROWS_PER_WG: u32 = 2u;
override WG: u32 = 64u;

struct Step { n: u32, pos0: u32 }
// Shape of this op (a uniform, so one pipeline serves every matrix of a dtype):
//   k = input features (q4: a multiple of 32); out_stride = width of a y row; row_offset = first y column
//   this chunk writes; out_rows = outputs of this chunk (weight rows, or half of them for epilogue 2)
struct Chunk { k: u32, out_stride: u32, row_offset: u32, out_rows: u32, epilogue: u32 }

@group(0) @binding(0) var<uniform> step: Step;
@group(0) @binding(1) var<storage, read> qweight: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<u32>;
@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> chunk: Chunk;

const MAX_ACC: u32 = 32u;
var<workgroup> partial: array<f32, WG * MAX_ACC>;

fn scale_at(i: u32) -> f32 {
  let pair = unpack_f16x2(scales[i >> 1u]);
  return select(pair.x, pair.y, (i & 1u) == 1u);
}

fn silu(v: f32) -> f32 {
  return v / (1.0 + exp(-v));
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
  let fused = select(1u, 2u, epilogue == 2u);
  let row0 = (wid.y * nwg.x + wid.x) * ROWS_PER_WG;
  let t0 = wid.z * TILE_T;
  let n = step.n;

  var acc: array<f32, MAX_ACC>;
  for (var i = 0u; i < MAX_ACC; i++) { acc[i] = 0.0; }

  for (var s = 0u; s < ROWS_PER_WG * fused; s++) {
    let out_row = row0 + (s % ROWS_PER_WG);
    if (out_row >= out_rows) { continue; }
    let w_row = out_row + (s / ROWS_PER_WG) * out_rows;   // up rows follow the gate rows
    for (var w = lid; w < words; w += WG) {
      let q = qweight[w_row * words + w];
      let sc = scale_at(w_row * groups + w / 4u);
      var wv: array<f32, 8>;
      for (var j = 0u; j < 8u; j++) {
        wv[j] = (f32((q >> (4u * j)) & 0xfu) - 7.0) * sc;
      }
      for (var t = 0u; t < TILE_T; t++) {
        let tok = t0 + t;
        if (tok >= n) { break; }
        let xb = tok * kdim + w * 8u;
        var dot = 0.0;
        for (var j = 0u; j < 8u; j++) { dot += wv[j] * x[xb + j]; }
        acc[s * TILE_T + t] += dot;
      }
    }
  }

  for (var i = 0u; i < ROWS_PER_WG * fused * TILE_T; i++) { partial[i * WG + lid] = acc[i]; }
  workgroupBarrier();

  for (var o = lid; o < ROWS_PER_WG * TILE_T; o += WG) {
    let r = o / TILE_T;
    let t = o % TILE_T;
    let out_row = row0 + r;
    let tok = t0 + t;
    if (out_row >= out_rows || tok >= n) { continue; }
    var sum = 0.0;
    for (var l = 0u; l < WG; l++) { sum += partial[o * WG + l]; }
    let at = tok * out_stride + row_offset + out_row;
    if (epilogue == 2u) {
      var up = 0.0;
      let o_up = (ROWS_PER_WG + r) * TILE_T + t;
      for (var l = 0u; l < WG; l++) { up += partial[o_up * WG + l]; }
      y[at] = silu(sum) * up;
    } else if (epilogue == 1u) {
      y[at] = y[at] + sum;
    } else {
      y[at] = sum;
    }
  }
}
