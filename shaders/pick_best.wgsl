// pick_best: the argmax over topk_blocks' per-block winners (TOPK = 1), written as the next token id, so
// the embedding gather that follows in the same submit feeds the picked token without a read-back (a
// split room's host samples and runs its own layers on the pick in one submit). Same order as the CPU's
// finish in src/gpu/engine.ts: larger value, ties to the lower id; id 0xffffffff (none allowed) never wins
// and is written when no block has a candidate (the caller's read-back then reports it).
//
// Bindings (declared in src/gpu/kernels/sampling/pick-best.ts, which generates their WGSL):
//   best storage, read  array<vec2<u32>> [BLOCKS]: (f32 bits, id)
//   ids  storage, rw    array<u32> [≥ 1]: ids[0] = the winner's id
// Dispatch: (1)

override BLOCKS: u32;
override WG: u32 = 64u;          // power of two

// NONE, beats and reduce_best: shaders/lib/best_candidate.wgsl.

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  var bv = 0.0;
  var bi = NONE;
  for (var b = lid; b < BLOCKS; b += WG) {
    let pair = best[b];
    let v = bitcast<f32>(pair.x);
    if (beats(v, pair.y, bv, bi)) { bv = v; bi = pair.y; }
  }
  let win = reduce_best(lid, bv, bi);
  if (lid == 0u) { ids[0] = win; }
}
