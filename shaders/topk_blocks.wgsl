// topk_blocks: the TOPK largest allowed logits of each block of WG·ITEMS ids, best first, on the device,
// so sampling reads back blocks·TOPK (value, id) pairs instead of all V logits. TOPK = 1 is argmax.
// Allowed: bit id%32 of mask word id/32 set (when use_mask is 1; ids past mask_words are not allowed)
// and the logit is > −inf (NaN never wins). Ties go to the lower id, as in src/model/sampler.ts.
// With report_top, each block also writes its best finite logit with no mask at best[blocks·TOPK + block],
// so the caller learns in the same pass whether the mask overruled the model's own top choice.
//
// Bindings (declared in src/gpu/kernels/sampling/topk-blocks.ts, which generates their WGSL):
//   params uniform        Params { use_mask, mask_words, report_top }
//   logits storage, read  array<f32> [V]
//   mask   storage, read  array<u32> [≥ 1]
//   best   storage, rw    array<vec2<u32>> [blocks, TOPK] (+ [blocks] with report_top): (f32 bits, id); id 0xffffffff = none
// Dispatch: (blocks) with blocks = ceil(V / (WG · ITEMS))

override V: u32;
override TOPK: u32 = 1u;
override ITEMS: u32 = 8u;
override WG: u32 = 128u;         // power of two

const MAX_ITEMS: u32 = 64u;

// NONE, beats and reduce_best: shaders/lib/best_candidate.wgsl.

fn allowed(id: u32, v: f32) -> bool {
  if (!(v >= -3.4028234e38)) { return false; }   // −inf and NaN never win
  if (params.use_mask == 0u) { return true; }
  let word = id >> 5u;
  return word < params.mask_words && ((mask[word] >> (id & 31u)) & 1u) == 1u;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let block0 = wid.x * WG * ITEMS;
  // this invocation's ids: block0 + lid + i·WG (ITEMS ≤ MAX_ITEMS); taken or disallowed ones are not live
  var vals: array<f32, MAX_ITEMS>;
  var live: array<bool, MAX_ITEMS>;
  for (var i = 0u; i < ITEMS; i++) {
    let id = block0 + lid + i * WG;
    live[i] = false;
    if (id < V) { vals[i] = logits[id]; live[i] = allowed(id, vals[i]); }
  }
  if (params.report_top == 1u) {
    // the block's best finite logit, mask or not
    var tv = 0.0;
    var ti = NONE;
    for (var i = 0u; i < ITEMS; i++) {
      let id = block0 + lid + i * WG;
      if (id < V && vals[i] >= -3.4028234e38 && beats(vals[i], id, tv, ti)) { tv = vals[i]; ti = id; }
    }
    let top_id = reduce_best(lid, tv, ti);
    if (lid == 0u) { best[num_workgroups_x() * TOPK + wid.x] = vec2<u32>(bitcast<u32>(red_val[0]), top_id); }
    workgroupBarrier();
  }
  for (var r = 0u; r < TOPK; r++) {
    var bv = 0.0;
    var bi = NONE;
    var bslot = 0u;
    for (var i = 0u; i < ITEMS; i++) {
      let id = block0 + lid + i * WG;
      if (live[i] && beats(vals[i], id, bv, bi)) { bv = vals[i]; bi = id; bslot = i; }
    }
    let win_id = reduce_best(lid, bv, bi);
    if (lid == 0u) { best[wid.x * TOPK + r] = vec2<u32>(bitcast<u32>(red_val[0]), win_id); }
    if (bi != NONE && bi == win_id) { live[bslot] = false; }   // the owner retires the winner
    workgroupBarrier();
  }
}

// blocks = ceil(V / (WG · ITEMS)), the dispatch size.
fn num_workgroups_x() -> u32 {
  return (V + WG * ITEMS - 1u) / (WG * ITEMS);
}
