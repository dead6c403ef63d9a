// attention: causal grouped-query attention over the KV cache (f16 or q8_0, read by k_pair / v_pair). One workgroup per (query head,
// token, split); keys are visited in tiles of WG with an online softmax (running max and sum), so any
// context length works with fixed workgroup memory. Query head h reads KV head h / (HQ / HKV); the
// token at position p sees keys 0..p; scale 1/√D.
// SPLITS = 1 (prefill, any n): the workgroup covers all keys and writes the normalised output.
// SPLITS > 1 (decode, n = 1; flash-decoding): the keys are cut into splits of at least MIN_KEYS, as
// many as the position allows up to SPLITS, so a long context runs on HQ·splits workgroups; each writes
// its partial (unnormalised sum, running max, sum of weights) and attention_combine merges them.
//
// Bindings (declared in src/gpu/kernels/attention/attention.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: tokens at positions pos0 .. pos0 + n − 1
//   q      storage, read  array<f32> [n, HQ·D] (already normalised and rotated)
//   kcache storage, read  array<u32> the K cache, f16 pairs [ctx, HKV·D/2] or q8_0 (KV_Q8 = 1; layout in
//                         shaders/lib/kv_read.wgsl), this step's keys already written
//   vcache storage, read  array<u32> the V cache, the same layout
//   out    storage, rw    array<f32> [n, HQ·D] (SPLITS = 1)
//   part   storage, rw    array<f32> [HQ, SPLITS, D + 2] (SPLITS > 1): acc[D], max, sum per split
// Dispatch: (HQ, n, SPLITS)

override HQ: u32;
override HKV: u32;
override D: u32;                 // even, ≤ 512
override SCALE: f32;             // 1 / sqrt(D)
override WG: u32 = 64u;          // power of two; keys per tile
override SPLITS: u32 = 1u;       // key splits of a decode step (1: no split)
override MIN_KEYS: u32 = 64u;    // fewest keys worth a split of their own
override KV_Q8: u32 = 0u;        // 1: the cache is q8_0 blocks (shaders/lib/kv_read.wgsl), else f16
override KV_SCALES: u32 = 0u;    // q8_0: the word where the scales start

const MAX_WORDS_PER_THREAD: u32 = 8u;    // D/2 / WG, rounded up
var<workgroup> probs: array<f32, WG>;
var<workgroup> red: array<f32, WG>;

fn reduce_max(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { red[lid] = max(red[lid], red[lid + stride]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

fn reduce_sum(v: f32, lid: u32) -> f32 {
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

// Keys [j0, j1) of split s for a token at position p (all of 0..p when SPLITS = 1).
fn split_keys(p: u32, s: u32) -> vec2<u32> {
  if (SPLITS == 1u) { return vec2<u32>(0u, p + 1u); }
  let keys = p + 1u;
  let splits = clamp((keys + MIN_KEYS - 1u) / MIN_KEYS, 1u, SPLITS);
  if (s >= splits) { return vec2<u32>(0u, 0u); }
  let per = (keys + splits - 1u) / splits;
  return vec2<u32>(s * per, min(keys, (s + 1u) * per));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = wid.x;
  let t = wid.y;
  let p = step.pos0 + t;
  let range = split_keys(p, wid.z);
  if (range.y <= range.x) { return; }  // a split this position does not need
  let kvh = h / (HQ / HKV);
  let half = D / 2u;
  let q_base = t * HQ * D + h * D;

  var m = -3.4e38;                   // running max (finite so exp(m − m_new) is 0, not NaN)
  var l = 0.0;                       // running sum of exp(score − m)
  var acc: array<vec2<f32>, MAX_WORDS_PER_THREAD>;
  for (var k = 0u; k < MAX_WORDS_PER_THREAD; k++) { acc[k] = vec2<f32>(0.0); }

  for (var base = range.x; base < range.y; base += WG) {
    let j = base + lid;
    var s = -3.4e38;
    if (j < range.y) {
      var dot = 0.0;
      for (var w = 0u; w < half; w++) {
        let kv = k_pair(j, kvh, w);
        dot += q[q_base + 2u * w] * kv.x + q[q_base + 2u * w + 1u] * kv.y;
      }
      s = dot * SCALE;
    }
    let m_new = max(m, reduce_max(s, lid));
    let pj = select(0.0, exp(s - m_new), j < range.y);
    probs[lid] = pj;
    let corr = exp(m - m_new);
    l = l * corr + reduce_sum(pj, lid);    // reduce_sum's barriers also publish probs
    m = m_new;
    let keys = min(WG, range.y - base);
    for (var k = 0u; k < MAX_WORDS_PER_THREAD; k++) {
      let w = lid + k * WG;
      if (w >= half) { break; }
      var a = acc[k] * corr;
      for (var jj = 0u; jj < keys; jj++) {
        a += probs[jj] * v_pair(base + jj, kvh, w);
      }
      acc[k] = a;
    }
    workgroupBarrier();              // probs is rewritten by the next tile
  }

  if (SPLITS == 1u) {
    for (var k = 0u; k < MAX_WORDS_PER_THREAD; k++) {
      let w = lid + k * WG;
      if (w >= half) { break; }
      let v = acc[k] / l;
      out[q_base + 2u * w] = v.x;
      out[q_base + 2u * w + 1u] = v.y;
    }
    return;
  }
  let pb = (h * SPLITS + wid.z) * (D + 2u);
  for (var k = 0u; k < MAX_WORDS_PER_THREAD; k++) {
    let w = lid + k * WG;
    if (w >= half) { break; }
    part[pb + 2u * w] = acc[k].x;
    part[pb + 2u * w + 1u] = acc[k].y;
  }
  if (lid == 0u) {
    part[pb + D] = m;
    part[pb + D + 1u] = l;
  }
}
