// x_plain: the decode matvecs' x as it is (shaders/matvec.wgsl, matvec_superblock.wgsl): the x vector is
// already normalised (or is no norm's input). ./x_rmsnorm.wgsl is the variant that folds the RMSNorm in.

// x's vec4 number i of the job's x vector (value v, already masked past k), as the dot reads it.
fn x_fold(v: vec4<f32>, i: u32) -> vec4<f32> { return v; }

// After reduce_rows: nothing to scale.
fn norm_rows(acc: ptr<function, array<f32, MAX_ROWS>>, lid: u32) {}
