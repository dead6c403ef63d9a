// attention_decode: one decode token's causal grouped-query attention over the KV cache (f16 or q8_0), one
// workgroup per (KV head, split): the GROUP = HQ / HKV query heads that share a KV head are served by
// one read of each key and value (the per-query-head kernel, attention.wgsl, reads them GROUP times).
// Keys are visited in tiles of WG, one key per thread: thread j scores key j against every head of the
// group (queries held in workgroup memory), then every thread folds the tile into the online softmax
// (running max m and sum l per head) by one pass over the tile's scores, with no reduction tree: three
// barriers a tile whatever GROUP is. For V, thread t owns words t, t + WG, … of the head dimension and
// accumulates them for every head of the group, so each value word is read once per tile. Heads go
// four at a time as vec4 lanes (the group padded to G4 = ⌈GROUP/4⌉ fours; padded heads score 0 and are
// never written), so one workgroup-memory load feeds four heads' multiply-adds.
// SPLITS = 1: the workgroup covers all keys and writes the normalised output. SPLITS > 1
// (flash-decoding): keys are cut exactly as attention.wgsl cuts them and each split writes its partial
// (unnormalised sum, running max, sum of weights) for attention_combine to merge.
// Workgroup memory: 16·G4·(D + 2·WG) bytes (the host checks it against the device limit; 8 KiB at
// GROUP 8, D 128, WG 64).
//
// Bindings (declared in src/gpu/kernels/attention/attention-decode.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: one token at pos0
//   q      storage, read  array<f32> [HQ·D] (already normalised and rotated)
//   kcache storage, read  array<u32> the K cache, f16 pairs [ctx, HKV·D/2] or q8_0 (KV_Q8 = 1; layout in
//                         shaders/lib/kv_read.wgsl), this step's key already written
//   vcache storage, read  array<u32> the V cache, the same layout
//   out    storage, rw    array<f32> [HQ·D] (SPLITS = 1)
//   part   storage, rw    array<f32> [HQ, SPLITS, D + 2] (SPLITS > 1): acc[D], max, sum per split
// Dispatch: (HKV, 1, SPLITS)

override HQ: u32;
override HKV: u32;
override D: u32;                 // a multiple of 4, ≤ 512
override SCALE: f32;             // 1 / sqrt(D)
override WG: u32 = 64u;          // keys per tile, one per thread
override SPLITS: u32 = 1u;       // key splits (1: none)
override MIN_KEYS: u32 = 64u;    // fewest keys worth a split of their own
override KV_Q8: u32 = 0u;        // 1: the cache is q8_0 blocks (shaders/lib/kv_read.wgsl), else f16
override KV_SCALES: u32 = 0u;    // q8_0: the word where the scales start
override G4: u32;                // ⌈GROUP / 4⌉: the group's heads in fours
override QS: u32;                // D·G4 query vec4s
override SW: u32;                // WG·G4 score vec4s of a tile

const MAX_G4: u32 = 4u;          // GROUP ≤ 16
const MAX_ACC: u32 = 8u;         // ⌈D/2 / WG⌉·G4 vec4 accumulators per component of a value word

var<workgroup> qs: array<vec4<f32>, QS>;       // [D][G4]: dimension d of heads 4c .. 4c + 3
var<workgroup> scores: array<vec4<f32>, SW>;   // [WG][G4]
var<workgroup> probs: array<vec4<f32>, SW>;    // [WG][G4]: exp(score − m) of the tile

// Keys [j0, j1) of split s for the token at position p (all of 0..p when SPLITS = 1).
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
  let kvh = wid.x;
  let range = split_keys(step.pos0, wid.z);
  if (range.y <= range.x) { return; }  // a split this position does not need (uniform per workgroup)
  let group = HQ / HKV;
  let half = D / 2u;
  let h0 = kvh * group;              // the group's first query head
  for (var i = lid; i < QS * 4u; i += WG) {
    let g = i / D;
    let d = i % D;
    qs[d * G4 + g / 4u][g % 4u] = select(0.0, q[(h0 + g) * D + d], g < group);
  }
  workgroupBarrier();

  var m: array<vec4<f32>, MAX_G4>;   // running max per head (finite so exp(m − m_new) is 0, not NaN)
  var l: array<vec4<f32>, MAX_G4>;   // running sum of exp(score − m) per head
  var ax: array<vec4<f32>, MAX_ACC>; // [word k][four c] at k·G4 + c: the word's first component
  var ay: array<vec4<f32>, MAX_ACC>; // … and its second
  for (var c = 0u; c < MAX_G4; c++) { m[c] = vec4<f32>(-3.4e38); l[c] = vec4<f32>(0.0); }
  for (var a = 0u; a < MAX_ACC; a++) { ax[a] = vec4<f32>(0.0); ay[a] = vec4<f32>(0.0); }

  for (var base = range.x; base < range.y; base += WG) {
    let keys = min(WG, range.y - base);
    var dots: array<vec4<f32>, MAX_G4>;
    for (var c = 0u; c < MAX_G4; c++) { dots[c] = vec4<f32>(0.0); }
    if (lid < keys) {
      for (var w = 0u; w < half; w++) {
        let kv = k_pair(base + lid, kvh, w);
        for (var c = 0u; c < G4; c++) {
          dots[c] += qs[2u * w * G4 + c] * kv.x + qs[(2u * w + 1u) * G4 + c] * kv.y;
        }
      }
    }
    for (var c = 0u; c < G4; c++) { scores[lid * G4 + c] = dots[c] * SCALE; }
    workgroupBarrier();

    // every thread computes the same new max per head from the tile's scores; thread j weighs key j
    var corr: array<vec4<f32>, MAX_G4>;
    for (var c = 0u; c < G4; c++) {
      var mt = m[c];
      for (var jj = 0u; jj < keys; jj++) { mt = max(mt, scores[jj * G4 + c]); }
      corr[c] = exp(m[c] - mt);
      m[c] = mt;
      probs[lid * G4 + c] = select(vec4<f32>(0.0), exp(scores[lid * G4 + c] - mt), lid < keys);
    }
    workgroupBarrier();

    for (var c = 0u; c < G4; c++) {
      var s = vec4<f32>(0.0);
      for (var jj = 0u; jj < keys; jj++) { s += probs[jj * G4 + c]; }
      l[c] = l[c] * corr[c] + s;
    }
    for (var k = 0u; k * WG + lid < half; k++) {
      let w = k * WG + lid;
      for (var c = 0u; c < G4; c++) { ax[k * G4 + c] *= corr[c]; ay[k * G4 + c] *= corr[c]; }
      for (var jj = 0u; jj < keys; jj++) {
        let v = v_pair(base + jj, kvh, w);
        for (var c = 0u; c < G4; c++) {
          let p = probs[jj * G4 + c];
          ax[k * G4 + c] += p * v.x;
          ay[k * G4 + c] += p * v.y;
        }
      }
    }
    workgroupBarrier();              // scores and probs are rewritten by the next tile
  }

  for (var k = 0u; k * WG + lid < half; k++) {
    let w = k * WG + lid;
    for (var g = 0u; g < group; g++) {
      let h = h0 + g;
      let x = ax[k * G4 + g / 4u][g % 4u];
      let y = ay[k * G4 + g / 4u][g % 4u];
      if (SPLITS == 1u) {
        let lg = l[g / 4u][g % 4u];
        out[h * D + 2u * w] = x / lg;
        out[h * D + 2u * w + 1u] = y / lg;
      } else {
        let pb = (h * SPLITS + wid.z) * (D + 2u);
        part[pb + 2u * w] = x;
        part[pb + 2u * w + 1u] = y;
      }
    }
  }
  if (SPLITS > 1u && lid == 0u) {
    for (var g = 0u; g < group; g++) {
      let pb = ((h0 + g) * SPLITS + wid.z) * (D + 2u);
      part[pb + D] = m[g / 4u][g % 4u];
      part[pb + D + 1u] = l[g / 4u][g % 4u];
    }
  }
}
