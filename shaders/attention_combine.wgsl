// attention_combine: merge the key splits of a decode step's attention (shaders/attention.wgsl with
// SPLITS > 1). Split s of head h left acc_s (Σ exp(score − m_s)·v over its keys), m_s and
// l_s = Σ exp(score − m_s); with m = max m_s and c_s = exp(m_s − m) the output is Σ c_s·acc_s / Σ c_s·l_s.
// The number of splits used is recomputed from the position exactly as attention.wgsl chose it.
//
// Bindings (declared in src/gpu/kernels/attention/attention-combine.ts, which generates their WGSL):
//   step  uniform        Step { n, pos0 }: one token at pos0
//   part  storage, read  array<f32> [HQ, SPLITS, D + 2]
//   out   storage, rw    array<f32> [HQ·D]
// Dispatch: (HQ)

override HQ: u32;
override D: u32;
override SPLITS: u32;
override MIN_KEYS: u32 = 64u;
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = wid.x;
  let keys = step.pos0 + 1u;
  let splits = clamp((keys + MIN_KEYS - 1u) / MIN_KEYS, 1u, SPLITS);
  let base = h * SPLITS * (D + 2u);
  var m = -3.4e38;
  for (var s = 0u; s < splits; s++) { m = max(m, part[base + s * (D + 2u) + D]); }
  var l = 0.0;
  for (var s = 0u; s < splits; s++) {
    let at = base + s * (D + 2u);
    l += exp(part[at + D] - m) * part[at + D + 1u];
  }
  for (var d = lid; d < D; d += WG) {
    var v = 0.0;
    for (var s = 0u; s < splits; s++) {
      let at = base + s * (D + 2u);
      v += exp(part[at + D] - m) * part[at + d];
    }
    out[h * D + d] = v / l;
  }
}
