// matvec_dense: y = x · Wᵀ for a dense F32 / F16 / BF16 weight W (one row chunk), with a fused epilogue.
// Decode (TILE_T = 1) is a matvec; prefill (TILE_T > 1) reuses every decoded weight word for TILE_T
// tokens (a skinny matmul reading the weight once per TILE_T tokens).
//
// Bindings (group 0):
//   0 step   uniform             Step { n, pos0 }: n = tokens (rows of x and y) in this step
//   1 weight storage, read       array<u32> [N_ROWS, ROW_WORDS]: F32 one value a word; F16/BF16 two a word,
//                                element 2i in the low half, rows padded to a whole word (zeros)
//   2 x      storage, read       array<f32> [n, K]
//   3 y      storage, read_write array<f32> [n, OUT_STRIDE]; this chunk writes columns row_offset + r
//   4 chunk  uniform             Chunk { k, out_stride, row_offset, out_rows, epilogue }
// epilogue: 0 y = acc; 1 y += acc (residual); 2 y[r] = silu(acc[r])·acc[r + out_rows] (gate|up rows).
// Dispatch: (gx, gy, ceil(n / TILE_T)) with gx·gy ≥ ceil(out_rows / ROWS_PER_WG) workgroups of WG.

override WDTYPE: u32;            // 0 F32, 1 F16, 2 BF16
override TILE_T: u32 = 1u;       // ROWS_PER_WG · TILE_T · 2 ≤ 32
override ROWS_PER_WG: u32 = 2u;
override WG: u32 = 64u;

struct Step { n: u32, pos0: u32 }
// Shape of this op (a uniform, so one pipeline serves every matrix of a dtype):
//   k = input features (q4: a multiple of 32); out_stride = width of a y row; row_offset = first y column
//   this chunk writes; out_rows = outputs of this chunk (weight rows, or half of them for epilogue 2)
struct Chunk { k: u32, out_stride: u32, row_offset: u32, out_rows: u32, epilogue: u32 }

@group(0) @binding(0) var<uniform> step: Step;
@group(0) @binding(1) var<storage, read> weight: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> chunk: Chunk;

const MAX_ACC: u32 = 32u;
var<workgroup> partial: array<f32, WG * MAX_ACC>;

fn silu(v: f32) -> f32 {
  return v / (1.0 + exp(-v));
}

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
  let row_words = (kdim + per_word - 1u) / per_word;
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
    for (var w = lid; w < row_words; w += WG) {
      let wv = decode_word(weight[w_row * row_words + w]);
      let k0 = w * per_word;
      let has_second = per_word == 2u && k0 + 1u < kdim;
      for (var t = 0u; t < TILE_T; t++) {
        let tok = t0 + t;
        if (tok >= n) { break; }
        var dot = wv.x * x[tok * kdim + k0];
        if (has_second) { dot += wv.y * x[tok * kdim + k0 + 1u]; }
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
