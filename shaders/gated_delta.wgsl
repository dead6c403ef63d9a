// gated_delta: the gated delta rule of one Gated DeltaNet layer on its recurrent state, for every token of
// the step in order (HF torch_recurrent_gated_delta_rule). A workgroup owns value head j's columns
// [c0, c0 + WG) of the state S_j [DK, DV]; each invocation keeps its column in registers for the whole
// step (read once, written once), so a prefill chunk is one dispatch and gives exactly the values of
// the same tokens one at a time. Per token, with key head kh(j) (grouped j / (NV/NK), or tiled j mod NK):
//   k̂ = k / √(Σk² + 1e−6);  q̂ = q / √(Σq² + 1e−6) / √DK;  β = σ(b_j);  g = A_j · softplus(a_j + dt_bias_j)
//   S ← e^g · S;  δ = β (v − Sᵀk̂);  S ← S + k̂ δᵀ;  o = Sᵀq̂
//
// Bindings (declared in src/gpu/kernels/hybrid/gated-delta.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   conv    storage, read  array<f32> [n, C]: q (NK·DK) | k (NK·DK) | v (NV·DV) after the conv and SiLU
//   ba      storage, read  array<f32> [n, 2·NV]: β logits, then decay inputs
//   a       storage, read  array<f32> [NV] A = −exp(A_log)
//   dt_bias storage, read  array<f32> [NV]
//   state   storage, rw    array<f32> [NV, DK, DV]
//   out     storage, rw    array<f32> [n, NV·DV]
// Dispatch: (NV, ceil(DV / WG))

override NK: u32;
override NV: u32;
override DK: u32;                // ≤ MAX_DK
override DV: u32;
override TILED: u32 = 0u;        // 1: value head j reads key head j mod NK
override WG: u32 = 64u;          // power of two

const MAX_DK: u32 = 256u;
var<workgroup> kq: array<f32, 512>;      // this token's k (0 .. DK) and q (DK .. 2·DK) of head kh
var<workgroup> red: array<f32, WG>;

fn sum_all(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { red[lid] += red[lid + stride]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

// log(1 + e^x) without losing small values (softplus; torch's threshold: x itself above 20).
fn softplus(x: f32) -> f32 {
  if (x > 20.0) { return x; }
  let u = exp(-abs(x));
  let w = 1.0 + u;
  let log1p = select(log(w) - ((w - 1.0) - u) / w, u, w == 1.0);
  return max(x, 0.0) + log1p;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wid.x;
  let col = wid.y * WG + lid;
  let live = col < DV;
  let kh = select(j / (NV / NK), j % NK, TILED == 1u);
  let width = 2u * NK * DK + NV * DV;
  var s: array<f32, MAX_DK>;
  if (live) { for (var i = 0u; i < DK; i++) { s[i] = state[(j * DK + i) * DV + col]; } }
  let qscale = 1.0 / sqrt(f32(DK));
  for (var t = 0u; t < step.n; t++) {
    let row = t * width;
    var sk = 0.0;
    var sq = 0.0;
    for (var i = lid; i < DK; i += WG) {
      let kv = conv[row + NK * DK + kh * DK + i];
      let qv = conv[row + kh * DK + i];
      kq[i] = kv;
      kq[DK + i] = qv;
      sk += kv * kv;
      sq += qv * qv;
    }
    let ik = 1.0 / sqrt(sum_all(sk, lid) + 1e-6);
    let iq = qscale / sqrt(sum_all(sq, lid) + 1e-6);
    let beta = 1.0 / (1.0 + exp(-ba[t * 2u * NV + j]));
    let decay = exp(a[j] * softplus(ba[t * 2u * NV + NV + j] + dt_bias[j]));
    if (live) {
      var mem = 0.0;
      for (var i = 0u; i < DK; i++) { s[i] = s[i] * decay; mem += s[i] * (kq[i] * ik); }
      let delta = (conv[row + 2u * NK * DK + j * DV + col] - mem) * beta;
      var o = 0.0;
      for (var i = 0u; i < DK; i++) { s[i] += (kq[i] * ik) * delta; o += s[i] * (kq[DK + i] * iq); }
      out[(t * NV + j) * DV + col] = o;
    }
    workgroupBarrier();          // the next token overwrites kq
  }
  if (live) { for (var i = 0u; i < DK; i++) { state[(j * DK + i) * DV + col] = s[i]; } }
}
