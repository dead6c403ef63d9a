// matvec_superblock: the decode matvec (y = x·Wᵀ for one token) for ggml weights, a 256-value
// super-block (of the 32-value types: eight blocks) decoded by SB_LANES lanes together (the layout of
// llama.cpp's mul_mat_vec_q4_k; our own code). The type's shaders/lib/ggml/<type>_superblock.wgsl gives SB_LANES,
// struct SbX (a lane's x values of a super-block, with the sums its mins need), fn sb_load_x(sb, part)
// and fn sb_dot(at, part, xs) (part `part` of the super-block whose bytes start at `at`, dotted with xs).
//
// Compared with shaders/matvec.wgsl (a lane per 32-value slice, the block header re-read and its scales
// unpacked by byte index for every slice), a lane here owns a fixed part of every super-block it visits:
// it unpacks only its own sub-blocks' scales and mins, from whole header words with constant shifts, once
// per super-block and row, and loads its x part once for the group's ROWS rows. Weights are read in
// 16-byte (vec4<u32>) loads.
//
// A workgroup of WG lanes is WG / LANES row groups of LANES lanes (LANES a multiple of SB_LANES); each group
// computes ROWS rows. Lane l of a group takes part l % SB_LANES of super-blocks l / SB_LANES,
// + LANES / SB_LANES, … (neighbouring lanes read neighbouring bytes of a super-block). reduce_rows
// (shaders/lib/reduce_*: subgroupAdd, subgroup shuffles or workgroup memory) sums each group's lanes and
// store_rows (shaders/lib/matvec_store.wgsl) writes the epilogue. SILU_GATE_UP as in matvec.wgsl: a group's
// slots are ROWS / 2 gate rows then their up rows. The dispatch and the job are matvec.wgsl's
// (src/gpu/kernels/linear/matvec-rows.ts).
//
// Bindings (declared in src/gpu/kernels/linear/linear-kernels.ts, which generates their WGSL):
//   step      uniform        Step (unused: decode is one token)
//   (weights) weight: the chunk's rows as GGUF stores them, k / 256 super-blocks a row (shaders/lib/formats/ggml.wgsl);
//             the norm-folded variants (matvec_superblock_norm_*) bind the norm weight first (shaders/lib/x_rmsnorm.wgsl)
//   x         storage, read  array<vec4<f32>> [k / 4]
//   y         storage, rw    array<f32> [out_stride]; this chunk writes columns row_offset + r
//   chunk     uniform        Chunk { k, out_stride, row_offset, out_rows, epilogue }

override WG: u32 = 64u;          // lanes per workgroup; a power of two
override LANES: u32 = 16u;       // lanes per row group: a power of two, a multiple of SB_LANES, dividing WG
override ROWS: u32 = 2u;         // rows per group, ≤ MAX_ROWS; even when the epilogue is SILU_GATE_UP

const MAX_ROWS: u32 = 8u;

// Where this workgroup's x vector starts in x, in vec4s (set from the job; superblock files read x[x_at + i]).
var<private> x_at: u32;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let out_rows = chunk.out_rows;
  let fused = chunk.epilogue == SILU_GATE_UP;
  let per_group = select(ROWS, ROWS / 2u, fused);
  let job = decode_job(wid, nwg);
  let first_of_wg = job.index * (WG / LANES) * per_group;
  if (!job.live || first_of_wg >= out_rows) { return; }
  x_at = job.x_base / 4u;
  let lane = lid % LANES;
  let first = first_of_wg + (lid / LANES) * per_group;
  let row_bytes = chunk.k / QK * QBYTES;

  // Byte offset of each slot's row; slots past the last row recompute it (never stored).
  var row_at: array<u32, MAX_ROWS>;
  var acc: array<f32, MAX_ROWS>;
  for (var j = 0u; j < ROWS; j++) {
    let r = min(first + j % per_group, out_rows - 1u);
    row_at[j] = (job.row_base + r + (j / per_group) * out_rows) * row_bytes;
    acc[j] = 0.0;
  }
  let part = lane % SB_LANES;
  let supers = chunk.k / QK;
  for (var sb = lane / SB_LANES; sb < supers; sb += LANES / SB_LANES) {
    let xs = sb_load_x(sb, part);
    for (var j = 0u; j < ROWS; j++) { acc[j] += sb_dot(row_at[j] + sb * QBYTES, part, xs); }
  }
  reduce_rows(&acc, lid);
  norm_rows(&acc, lid);                                  // shaders/lib/x_plain.wgsl (nothing) or x_rmsnorm.wgsl

  if (lane != 0u) { return; }
  store_rows(job, first, per_group, &acc);
}
