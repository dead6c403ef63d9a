// matmul_rows: the prefill matmul for SIMD rasterizers (lavapipe, SwiftShader), y = x·Wᵀ for n tokens,
// one structure for every weight format, with no workgroup memory: each lane owns R weight rows and the
// workgroup's TT tokens are the same for all its lanes, so each weight, decoded once, feeds TT tokens and
// each x value feeds R rows of every lane. The format's block decode (shaders/lib/formats/<format>.wgsl)
// supplies the weights: PARTS (parts of 8 elements per block, a constant from its table row), struct
// WRaw, fn w_raw(row, blk, k) -> WRaw (one block of a row as stored) and fn w_decode(raw, part) ->
// array<vec4<f32>, 2> (its elements 8·part .. 8·part + 7).
// How x reaches the lanes is a variant library that also holds the entry point (it alone knows which
// builtins it needs) and calls rows_main: shaders/lib/rows_x_plain.wgsl (every lane loads all 8 values
// of a part; one address across the lanes) or rows_x_subgroup.wgsl (the lanes load different values
// and share them by subgroupBroadcast: on a CPU rasterizer a storage load is a loop over the SIMD lanes
// even when they agree, so this loads each x value once instead of once per lane).
// For SILU_GATE_UP a lane's R slots are R/2 gate rows followed by their up rows.
// The job library (shaders/lib/job_plain.wgsl or job_experts.wgsl) maps the workgroup to its rows and
// tokens (prefill_job) and a token of the job to its x row and y row (x_row, y_row).
// Dispatch: plain: (gx, gy, ceil(n / TT)) with gx·gy ≥ ceil(out_rows / (WG · rows per lane)). Experts:
// (that, the chunk's experts, ceil(n / TT)).
//
// Bindings (declared in src/gpu/kernels/linear/linear-kernels.ts, which generates their WGSL):
//   step      uniform        Step { n, pos0 }: n = tokens
//   (weights) the format's (shaders/lib/formats/<format>.wgsl)
//   x         storage, read  array<f32> [n, k]
//   y         storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk     uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }
// (MoE expert variants add route, bytes_read and experts: src/gpu/kernels/moe/experts.ts.)

override WG: u32 = 8u;           // lanes
override R: u32 = 8u;            // weight rows per lane, even, ≤ MAX_R
override TT: u32 = 8u;           // tokens per workgroup, ≤ MAX_TT

const MAX_R: u32 = 8u;
const MAX_TT: u32 = 16u;

// lane: the invocation's lane in its subgroup (the subgroup variant), else 0
fn rows_main(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, lane: u32) {
  let job = prefill_job(wid, nwg, lid);
  let n = job.tokens;
  let out_rows = chunk.out_rows;
  let fused = chunk.epilogue == SILU_GATE_UP;
  let per_lane = select(R, R / 2u, fused);                 // output rows of a lane
  let first_of_wg = job.index * WG * per_lane;
  let t0 = wid.z * TT;
  if (!job.live || first_of_wg >= out_rows || t0 >= n) { return; }
  let first = first_of_wg + lid * per_lane;

  var rows: array<u32, MAX_R>;
  for (var j = 0u; j < R; j++) {
    let r = min(first + j % per_lane, out_rows - 1u);      // past the end: the last row, never stored
    rows[j] = job.row_base + r + (j / per_lane) * out_rows;
  }
  var toks: array<u32, MAX_TT>;
  for (var t = 0u; t < TT; t++) { toks[t] = x_row(min(t0 + t, n - 1u)); }   // past n: the last token, never stored
  var acc: array<array<f32, MAX_R>, MAX_TT>;
  for (var t = 0u; t < TT; t++) { for (var j = 0u; j < R; j++) { acc[t][j] = 0.0; } }

  let block_k = PARTS * 8u;
  let blocks = (chunk.k + block_k - 1u) / block_k;
  for (var blk = 0u; blk < blocks; blk++) {
    var raw: array<WRaw, MAX_R>;
    for (var j = 0u; j < R; j++) { raw[j] = w_raw(rows[j], blk, chunk.k); }
    let tail = (blk + 1u) * block_k > chunk.k;
    for (var part = 0u; part < PARTS; part++) {
      var w: array<array<vec4<f32>, 2>, MAX_R>;
      for (var j = 0u; j < R; j++) { w[j] = w_decode(raw[j], part); }
      let k0 = blk * block_k + part * 8u;
      for (var t = 0u; t < TT; t++) {
        let xp = x_part(toks[t], k0, tail, lane);
        for (var j = 0u; j < R; j++) {           // in k order, one rounding per term (fewer instructions than dot)
          let lo = w[j][0];
          let hi = w[j][1];
          var a = acc[t][j];
          a = fma(lo.x, xp[0].x, a); a = fma(lo.y, xp[0].y, a); a = fma(lo.z, xp[0].z, a); a = fma(lo.w, xp[0].w, a);
          a = fma(hi.x, xp[1].x, a); a = fma(hi.y, xp[1].y, a); a = fma(hi.z, xp[1].z, a); a = fma(hi.w, xp[1].w, a);
          acc[t][j] = a;
        }
      }
    }
  }

  for (var t = 0u; t < TT; t++) {
    let tok = t0 + t;
    if (tok >= n) { break; }
    for (var j = 0u; j < per_lane; j++) {
      let r = first + j;
      if (r >= out_rows) { break; }
      let at = y_row(tok) * chunk.out_stride + chunk.row_offset + r;
      let v = acc[t][j];
      if (fused) {
        y[at] = v / (1.0 + exp(-v)) * acc[t][j + per_lane];   // silu(gate) · up
      } else if (chunk.epilogue == ADD_RESIDUAL) {
        y[at] = y[at] + v;
      } else {
        y[at] = v;
      }
    }
  }
}
