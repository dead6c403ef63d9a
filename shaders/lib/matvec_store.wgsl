// matvec_store: the decode matvecs' epilogue (shaders/matvec.wgsl, matvec_superblock.wgsl): a row group's
// lane 0 writes its per_group output rows from the reduced sums acc (slots 0 .. per_group − 1, and for
// SILU_GATE_UP the up rows in slots per_group ..), counting the weight rows read (the job library's
// rows_read: experts count their bytes). `first` is the group's first output row.

fn store_rows(job: Job, first: u32, per_group: u32, acc: ptr<function, array<f32, MAX_ROWS>>) {
  let out_rows = chunk.out_rows;
  let fused = chunk.epilogue == SILU_GATE_UP;
  if (first < out_rows) { rows_read(job, min(per_group, out_rows - first) * select(1u, 2u, fused)); }
  for (var j = 0u; j < per_group; j++) {
    let r = first + j;
    if (r >= out_rows) { break; }
    let at = job.y_base + chunk.row_offset + r;
    let v = (*acc)[j];
    if (fused) {
      y[at] = v / (1.0 + exp(-v)) * (*acc)[j + per_group];   // silu(gate) · up
    } else if (chunk.epilogue == ADD_RESIDUAL) {
      y[at] = y[at] + v;
    } else {
      y[at] = v;
    }
  }
}
