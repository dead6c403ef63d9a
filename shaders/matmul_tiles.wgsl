// matmul_tiles: the prefill matmul (y = x·Wᵀ for n tokens), one structure for every weight format,
// tiled in workgroup memory. The format's block decode (shaders/lib/formats/<format>.wgsl: PARTS, WRaw,
// w_raw, w_decode, as for shaders/matmul_rows.wgsl) fills the weight tile (load_w below); a block is
// PARTS·8 ≤ 32 values and divides BK.
//
// A workgroup computes a tile of BM tokens × BN weight rows. For each block of BK = 32 columns it
// dequantizes the tile's BN weight rows once into ws and copies x's BM rows into xs (both k-major),
// then each of its WG = (BM/TM)·(BN/TN) threads accumulates TM tokens × TN rows in registers. A weight
// is decoded once per BM tokens, an x value read once per BN rows. Threads are numbered rows fastest,
// so the lanes of a SIMD vector or warp share their tokens: their xs reads are one broadcast.
// The finished tile goes through workgroup memory (ws, reused; BK tokens a pass, so a 64 × 64 tile fits
// the 16 KiB every WebGPU device has: ws 32·64 + xs 32·64 floats) so the epilogue sees gate and up together
// (SILU_GATE_UP: tile rows [0, BN/2) are gate rows, [BN/2, BN) the matching up rows) and y is written
// with neighbouring threads on neighbouring columns.
// The job library (shaders/lib/job_plain.wgsl or job_experts.wgsl) maps the workgroup to its rows and
// tokens (prefill_job) and a token of the job to its x row and y row (x_row, y_row).
// Dispatch: plain: (gx, gy, ceil(n / BM)) with gx·gy ≥ ceil(out_rows / rows per tile); tile wid.y·nwg.x +
// wid.x. Experts: (that, the chunk's experts, ceil(n / BM)).
//
// Bindings (declared in src/gpu/kernels/linear/linear-kernels.ts, which generates their WGSL):
//   step      uniform        Step { n, pos0 }: n = tokens
//   (weights) the format's (shaders/lib/formats/<format>.wgsl)
//   x         storage, read  array<f32> [n, k]
//   y         storage, rw    array<f32> [n, out_stride]; this chunk writes columns row_offset + r
//   chunk     uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }
// (MoE expert variants add route, bytes_read and experts: src/gpu/kernels/moe/experts.ts.)

override BM: u32 = 16u;          // tokens per tile, ≤ BK or a multiple of it (the output tile reuses ws in passes of BK tokens)
override BN: u32 = 64u;          // weight rows per tile, even
override TM: u32 = 16u;          // tokens per thread, ≤ MAX_TM, divides BM (and BK)
override TN: u32 = 1u;           // rows per thread, ≤ MAX_TN, divides BN (8 × 8 per thread: a GPU's
                                 // 64 fmas per 16 workgroup-memory loads a k step)
override WG: u32 = 64u;          // (BM / TM) · (BN / TN)

const BK: u32 = 32u;
const MAX_TM: u32 = 16u;
const MAX_TN: u32 = 8u;

var<workgroup> ws: array<f32, BK * BN>;     // [k][tile row]; after the k loop: the output tile [token][tile row]
var<workgroup> xs: array<f32, BK * BM>;     // [k][tile token]

// W[wrow, 32·kb .. +32), dequantized to f32, into ws[k·BN + i]: the k block's 32 / (PARTS·8) format
// blocks; blocks past the row's end (only a dense row's, k % 32 ≠ 0) are zeros.
fn load_w(wrow: u32, kb: u32, i: u32) {
  let block_k = PARTS * 8u;
  let per_kb = BK / block_k;
  let blocks = (chunk.k + block_k - 1u) / block_k;
  for (var b = 0u; b < per_kb; b++) {
    let blk = kb * per_kb + b;
    let live = blk < blocks;
    var raw: WRaw;
    if (live) { raw = w_raw(wrow, blk, chunk.k); }
    for (var p = 0u; p < PARTS; p++) {
      var v = array<vec4<f32>, 2>(vec4<f32>(0.0), vec4<f32>(0.0));
      if (live) { v = w_decode(raw, p); }
      let k = b * block_k + 8u * p;
      for (var e = 0u; e < 4u; e++) {
        ws[(k + e) * BN + i] = v[0][e];
        ws[(k + 4u + e) * BN + i] = v[1][e];
      }
    }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let job = prefill_job(wid, nwg, lid);
  let n = job.tokens;
  let kdim = chunk.k;
  let out_rows = chunk.out_rows;
  let fused = chunk.epilogue == SILU_GATE_UP;
  let tile_out = select(BN, BN / 2u, fused);               // output rows of a tile
  let r0 = job.index * tile_out;
  let t0 = wid.z * BM;
  if (!job.live || r0 >= out_rows || t0 >= n) { return; }
  let tr = lid % (BN / TN);                                // rows tr·TN ..
  let tc = lid / (BN / TN);                                // tokens tc·TM ..

  var acc: array<array<f32, MAX_TN>, MAX_TM>;
  for (var t = 0u; t < TM; t++) { for (var r = 0u; r < TN; r++) { acc[t][r] = 0.0; } }

  let kblocks = (kdim + BK - 1u) / BK;
  for (var kb = 0u; kb < kblocks; kb++) {
    for (var i = lid; i < BN; i += WG) {
      // tile row i: W row r0 + i, or for gate|up the gate row r0 + i / the up row out_rows + r0 + i − BN/2;
      // rows past the end repeat the last one (computed, never stored)
      let part = select(0u, i / (BN / 2u), fused);
      let r = min(r0 + i - part * (BN / 2u), out_rows - 1u);
      load_w(job.row_base + r + part * out_rows, kb, i);
    }
    for (var i = lid; i < BM * BK; i += WG) {
      let t = i / BK;
      let k = i % BK;
      let tok = t0 + t;
      let kk = kb * BK + k;
      let v = x[x_row(min(tok, n - 1u)) * kdim + min(kk, kdim - 1u)];
      xs[k * BM + t] = select(0.0, v, tok < n && kk < kdim);
    }
    workgroupBarrier();
    for (var k = 0u; k < BK; k++) {
      var b: array<f32, MAX_TN>;
      for (var r = 0u; r < TN; r++) { b[r] = ws[k * BN + tr * TN + r]; }
      for (var t = 0u; t < TM; t++) {
        let a = xs[k * BM + tc * TM + t];
        for (var r = 0u; r < TN; r++) { acc[t][r] = fma(a, b[r], acc[t][r]); }
      }
    }
    workgroupBarrier();
  }

  // The output tile goes through ws in passes of BK tokens (ws holds BK·BN values; BM may be 64): a
  // thread's TM tokens lie in one pass (TM divides BK).
  for (var p0 = 0u; p0 < BM; p0 += BK) {
    if (tc * TM >= p0 && tc * TM < p0 + BK) {
      for (var t = 0u; t < TM; t++) {
        for (var r = 0u; r < TN; r++) { ws[(tc * TM + t - p0) * BN + tr * TN + r] = acc[t][r]; }
      }
    }
    workgroupBarrier();
    for (var i = lid; i < min(BK, BM - p0) * tile_out; i += WG) {
      let t = i / tile_out;
      let j = i % tile_out;
      let tok = t0 + p0 + t;
      let row = r0 + j;
      if (tok >= n || row >= out_rows) { continue; }
      let v = ws[t * BN + j];
      let at = y_row(tok) * chunk.out_stride + chunk.row_offset + row;
      if (fused) {
        y[at] = v / (1.0 + exp(-v)) * ws[t * BN + j + BN / 2u];   // silu(gate) · up
      } else if (chunk.epilogue == ADD_RESIDUAL) {
        y[at] = y[at] + v;
      } else {
        y[at] = v;
      }
    }
    workgroupBarrier();                                    // every read of ws done before the next pass writes
  }
}
