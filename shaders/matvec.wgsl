// matvec: the decode matvec (y = x·Wᵀ for one token), one structure for every weight format. The
// format's libraries (src/gpu/kernels/linear/formats.ts) supply its block: its decode
// (shaders/lib/formats/<format>.wgsl) and its block dot (<format>_dot.wgsl): BLOCK_K (elements per block),
// struct XBlock, fn load_x(blk) -> XBlock and fn block_dot(row, blk, xb) -> f32 (W[row, block blk] ·
// x[block blk]). The dot is the format's own, not decode-then-dot, because its summation order is part
// of its numerics (q4f16_1 folds its offset into Σx; ggml types fold their mins).
//
// A workgroup of WG lanes is WG / LANES row groups of LANES lanes; each group computes ROWS rows of W.
// The LANES lanes of a group split each row: lane l takes blocks l, l + LANES, … so neighbouring lanes
// read neighbouring 16-byte chunks; each x block is loaded once for the group's ROWS rows and the ROWS
// partial sums stay in registers. reduce_rows (shaders/lib/reduce_*) sums each group's lanes and the
// group's lane 0 writes the epilogue (shaders/lib/matvec_store.wgsl). LANES = WG is llama.cpp's layout (one row group per workgroup);
// LANES = 1 gives every lane its own rows, so all lanes read the same x (one load on SIMD rasterizers).
// For SILU_GATE_UP a group's ROWS slots are ROWS/2 gate rows followed by their up rows (rows r and
// r + out_rows of W), so gate and up share x too.
// The job library (shaders/lib/job_plain.wgsl, or job_experts.wgsl for MoE experts) maps the workgroup
// to its rows, its x vector and its y vector (decode_job) and counts the weight rows read (rows_read; experts count their bytes).
// Dispatch: plain: (gx, gy) with gx·gy ≥ ceil(out_rows / rows per workgroup); workgroup wid.y·nwg.x +
// wid.x. Experts: (ceil(out_rows / rows per workgroup), k): the token's expert slot wid.y.
//
// Bindings (declared in src/gpu/kernels/linear/linear-kernels.ts, which generates their WGSL):
//   step      uniform        Step (unused: decode is one token)
//   (weights) the format's (shaders/lib/formats/<format>.wgsl); the norm-folded variants (matvec_norm_*) bind
//             the norm weight first (shaders/lib/x_rmsnorm.wgsl)
//   x         storage, read  array<vec4<f32>> [ceil(k/4)]
//   y         storage, rw    array<f32> [out_stride]; this chunk writes columns row_offset + r
//   chunk     uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }
// (MoE expert variants add route, bytes_read and experts: src/gpu/kernels/moe/experts.ts.)

override WG: u32 = 8u;           // lanes per workgroup; a power of two
override LANES: u32 = 8u;        // lanes per row group, a power of two dividing WG
override ROWS: u32 = 2u;         // rows per group, ≤ MAX_ROWS; even when the epilogue is SILU_GATE_UP

const MAX_ROWS: u32 = 8u;

// Where this workgroup's x vector starts in x, in vec4s (set from the job; format files read x[x_at + i]).
var<private> x_at: u32;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let out_rows = chunk.out_rows;
  let fused = chunk.epilogue == SILU_GATE_UP;
  let per_group = select(ROWS, ROWS / 2u, fused);          // output rows of a row group
  let job = decode_job(wid, nwg);
  let first_of_wg = job.index * (WG / LANES) * per_group;
  if (!job.live || first_of_wg >= out_rows) { return; }
  x_at = job.x_base / 4u;                                  // x is read in vec4s (experts: k % 4 == 0)
  let lane = lid % LANES;
  let first = first_of_wg + (lid / LANES) * per_group;

  // Weight row of each slot; slots past the last row recompute it (never stored) so the loop has no branch.
  var rows: array<u32, MAX_ROWS>;
  var acc: array<f32, MAX_ROWS>;
  for (var j = 0u; j < ROWS; j++) {
    let r = min(first + j % per_group, out_rows - 1u);
    rows[j] = job.row_base + r + (j / per_group) * out_rows;
    acc[j] = 0.0;
  }
  let blocks = (chunk.k + BLOCK_K - 1u) / BLOCK_K;
  for (var blk = lane; blk < blocks; blk += LANES) {
    let xb = load_x(blk);
    for (var j = 0u; j < ROWS; j++) { acc[j] += block_dot(rows[j], blk, xb); }
  }
  reduce_rows(&acc, lid);
  norm_rows(&acc, lid);                                  // shaders/lib/x_plain.wgsl (nothing) or x_rmsnorm.wgsl

  if (lane != 0u) { return; }
  store_rows(job, first, per_group, &acc);               // shaders/lib/matvec_store.wgsl
}
