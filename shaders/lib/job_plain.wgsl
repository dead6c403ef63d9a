// job_plain: the job of a linear kernel's workgroup for a plain matrix (shaders/matvec.wgsl,
// matmul_rows.wgsl, matmul_tiles.wgsl): every workgroup works on the same x and y; its index over the
// output rows is wid.y·nwg.x + wid.x (grids spread over x and y past 65535). The MoE experts' version,
// shaders/lib/job_experts.wgsl, gives each workgroup an expert's rows and that expert's tokens.

struct Job {
  index: u32,                  // the workgroup's place along the output rows
  live: bool,                  // false: nothing to do (an expert another chunk holds, or none chosen)
  row_base: u32,               // first weight row of the job in this chunk
  x_base: u32,                 // decode: first element of the job's x vector
  y_base: u32,                 // decode: first element of the job's y vector
  tokens: u32,                 // prefill: tokens of the job
}

fn decode_job(wid: vec3<u32>, nwg: vec3<u32>) -> Job {
  return Job(wid.y * nwg.x + wid.x, true, 0u, 0u, 0u, 1u);
}

fn prefill_job(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> Job {
  return Job(wid.y * nwg.x + wid.x, true, 0u, 0u, 0u, step.n);
}

// The x row and y row of the job's t-th token.
fn x_row(t: u32) -> u32 { return t; }
fn y_row(t: u32) -> u32 { return t; }

// A decode row group read `rows` weight rows (counted, in bytes, for experts only).
fn rows_read(job: Job, rows: u32) {}
