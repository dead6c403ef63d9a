// attention_prefill_tiles: a prefill step's causal grouped-query attention over the KV cache (f16 or q8_0,
// read by k_pair / v_pair), flash-attention style. One workgroup per (KV head, block of BQ tokens) serves
// ROWS = BQ·GROUP query rows (GROUP = HQ / HKV heads share the KV head): row r is token t0 + r / GROUP of
// query head kvh·GROUP + r % GROUP. The keys 0..last (last: the block's last position) are walked in tiles
// of BK: each tile's keys, then its values, are decoded once into workgroup memory and used by every row
// (attention.wgsl, one workgroup per (query head, token), reads each key and value once per row). Per tile:
//   1. K tile -> kv; each thread scores one row against 4 keys (its query row read once per 4 keys);
//   2. thread r < ROWS folds its row's scores into the online softmax (running max m, sum l), leaving
//      the weights exp(s − m) in the scores and exp(m_old − m) in corr;
//   3. V tile -> kv; each thread owns output pairs (row, word) and adds Σ weight·v to them, scaled by corr.
// Causal mask: the row of position p weighs keys 0..p (later keys of the tile weigh 0 and are loaded as 0);
// the block stops after the tile holding its last position. A row's keys are visited in the same tiles
// (multiples of BK from 0) whichever block or step it lands in, so its result does not depend on how
// the prompt is cut into steps. Scale 1/√D.
// Workgroup memory: 8·BK·D/2 + 4·ROWS·BK + 8·ROWS bytes (the host picks BQ and BK within the device limit:
// ≈ 10 KiB at D 128, GROUP 4).
//
// Bindings (declared in src/gpu/kernels/attention/attention-prefill-tiles.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: tokens at positions pos0 .. pos0 + n − 1
//   q      storage, read  array<f32> [n, HQ·D] (already normalised and rotated)
//   kcache storage, read  array<u32> the K cache, f16 pairs [ctx, HKV·D/2] or q8_0 (KV_Q8 = 1; layout in
//                         shaders/lib/kv_read.wgsl), this step's keys already written
//   vcache storage, read  array<u32> the V cache, the same layout
//   out    storage, rw    array<f32> [n, HQ·D]
// Dispatch: (HKV, ⌈n / BQ⌉, 1)

override HQ: u32;
override HKV: u32;
override D: u32;                 // even
override SCALE: f32;             // 1 / sqrt(D)
override KV_Q8: u32 = 0u;        // 1: the cache is q8_0 blocks (shaders/lib/kv_read.wgsl), else f16
override KV_SCALES: u32 = 0u;    // q8_0: the word where the scales start
override WG: u32 = 128u;         // threads; ≥ ROWS
override BQ: u32;                // tokens per block
override ROWS: u32;              // BQ · GROUP query rows
override BK: u32;                // keys per tile, a multiple of 4
override TILE: u32;              // BK · D/2: the pairs of one K or V tile
override SCORES: u32;            // ROWS · BK

const KS: u32 = 4u;              // keys a thread scores per read of its query row
const MAX_ACC: u32 = 16u;        // output pairs per thread: ⌈ROWS·D/2 / WG⌉ (the host keeps it within)

var<workgroup> kv: array<vec2<f32>, TILE>;    // [BK][D/2]: the tile's keys, then its values
var<workgroup> scores: array<f32, SCORES>;    // [ROWS][BK]: scores, then weights exp(s − m)
var<workgroup> corr: array<f32, ROWS>;        // per row: exp(m_old − m_new) of this tile
var<workgroup> sums: array<f32, ROWS>;        // per row: the final Σ weights, for the output

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let kvh = wid.x;
  let t0 = wid.y * BQ;
  if (t0 >= step.n) { return; }                 // uniform per workgroup
  let group = HQ / HKV;
  let half = D / 2u;
  let last = step.pos0 + min(t0 + BQ, step.n) - 1u;   // the block's last position: it needs keys 0..last

  var m = -3.4e38;                   // thread r < ROWS: row r's running max (finite: exp(m − m_new) is 0, not NaN)
  var l = 0.0;                       // … and its running sum of exp(score − m)
  var acc: array<vec2<f32>, MAX_ACC>;
  for (var k = 0u; k < MAX_ACC; k++) { acc[k] = vec2<f32>(0.0); }

  for (var base = 0u; base <= last; base += BK) {
    // 1. keys of the tile (0 past the block's last position: never read from the cache)
    for (var i = lid; i < TILE; i += WG) {
      let j = base + i / half;
      var kp = vec2<f32>(0.0);
      if (j <= last) { kp = k_pair(j, kvh, i % half); }
      kv[i] = kp;
    }
    workgroupBarrier();
    for (var i = lid; i < ROWS * (BK / KS); i += WG) {
      let r = i / (BK / KS);
      let jj = (i % (BK / KS)) * KS;
      let t = t0 + r / group;
      var s = vec4<f32>(0.0);
      if (t < step.n) {
        let qb = t * HQ * D + (kvh * group + r % group) * D;
        for (var w = 0u; w < half; w++) {
          let qx = q[qb + 2u * w];
          let qy = q[qb + 2u * w + 1u];
          for (var c = 0u; c < KS; c++) {
            let kp = kv[(jj + c) * half + w];
            s[c] += qx * kp.x + qy * kp.y;
          }
        }
      }
      for (var c = 0u; c < KS; c++) { scores[r * BK + jj + c] = s[c] * SCALE; }
    }
    workgroupBarrier();
    // 2. the online softmax of row lid over the tile's keys it may see
    if (lid < ROWS) {
      let t = t0 + lid / group;
      let p = step.pos0 + t;
      let seen = select(0u, min(BK, p + 1u - min(p + 1u, base)), t < step.n);   // keys base .. p of the tile
      var mt = m;
      for (var jj = 0u; jj < seen; jj++) { mt = max(mt, scores[lid * BK + jj]); }
      var sum = 0.0;
      for (var jj = 0u; jj < BK; jj++) {
        let e = select(0.0, exp(scores[lid * BK + jj] - mt), jj < seen);
        scores[lid * BK + jj] = e;
        sum += e;
      }
      let c = exp(m - mt);
      l = l * c + sum;
      m = mt;
      corr[lid] = c;
    }
    workgroupBarrier();
    // 3. values of the tile, weighed into each thread's output pairs
    for (var i = lid; i < TILE; i += WG) {
      let j = base + i / half;
      var vp = vec2<f32>(0.0);
      if (j <= last) { vp = v_pair(j, kvh, i % half); }
      kv[i] = vp;
    }
    workgroupBarrier();
    for (var k = 0u; lid + k * WG < ROWS * half; k++) {
      let e = lid + k * WG;
      let r = e / half;
      let w = e % half;
      var a = acc[k] * corr[r];
      for (var jj = 0u; jj < BK; jj++) { a += scores[r * BK + jj] * kv[jj * half + w]; }
      acc[k] = a;
    }
    workgroupBarrier();              // kv, scores and corr are rewritten by the next tile
  }

  if (lid < ROWS) { sums[lid] = l; }
  workgroupBarrier();
  for (var k = 0u; lid + k * WG < ROWS * half; k++) {
    let e = lid + k * WG;
    let r = e / half;
    let w = e % half;
    let t = t0 + r / group;
    if (t < step.n) {
      let o = t * HQ * D + (kvh * group + r % group) * D + 2u * w;
      let v = acc[k] / sums[r];
      out[o] = v.x;
      out[o + 1u] = v.y;
    }
  }
}
