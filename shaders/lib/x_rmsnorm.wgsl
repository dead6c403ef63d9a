// x_rmsnorm: the decode matvecs (shaders/matvec.wgsl, matvec_superblock.wgsl) with the RMSNorm before
// them folded in, so a decode layer runs no rmsnorm dispatch: x is the un-normalised hidden row and
// norm its weight g [k]. For one token
//   y[r] = Σ_i W[r,i] · x[i] · inv · g[i] = inv · Σ_i W[r,i] · (x[i] · g[i]),  inv = 1 / sqrt(mean(x²) + EPS)
// so the dots read x ⊙ g, each lane sums x² of the values it loads (its row group's lanes together load
// the whole x once: the same pass), and after reduce_rows each row is scaled by inv: no second pass over x.
// The rounding differs from rmsnorm then matvec (x·inv·g rounded first there) by an ulp or so per product;
// the oracle tests hold both to the same tolerance. Needs k % 4 == 0 (norm is read in vec4s); a dense
// F16/BF16 row's last 8-value block may reach one vec4 past k: its x is masked to 0 before x_fold, so the
// norm value read there (out of range: robust access gives an in-range value or 0) adds nothing.
// Σ x² is summed per row group, not with rmsnorm's row_sum over the workgroup: a workgroup may hold
// several row groups, each of which loads the whole x.
// Bindings (declared in src/gpu/kernels/linear/linear-kernels.ts, which generates their WGSL):
//   norm      storage, read  array<vec4<f32>> [k / 4]: the norm's weight g, bound after step

override EPS: f32;

// Σ x² over the values this lane has loaded.
var<private> x_sq: f32 = 0.0;

// x's vec4 number i of the job's x vector (value v, already masked past k): add its squares, return x ⊙ g.
fn x_fold(v: vec4<f32>, i: u32) -> vec4<f32> {
  x_sq += dot(v, v);
  return v * norm[i];
}

// After reduce_rows: the row group's Σ x² (its lanes' shares summed the way reduce_rows sums a row) gives
// inv, and each row's dot is scaled by it. Only the group's lane 0 stores, so only its sums must be right.
fn norm_rows(acc: ptr<function, array<f32, MAX_ROWS>>, lid: u32) {
  let inv = 1.0 / sqrt(reduce_lanes(x_sq, lid) / f32(chunk.k) + EPS);
  for (var j = 0u; j < ROWS; j++) { (*acc)[j] *= inv; }
}
