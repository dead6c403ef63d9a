// embed: the embedding gather for a table [V, H] held in row chunks, one structure for every weight
// format: the format's block decode (shaders/lib/formats/<format>.wgsl: PARTS, WRaw, w_raw, w_decode)
// gives each value exactly as the linears see it. Each dispatch covers one chunk (rows [row_start,
// row_start + rows)); tokens whose id lies elsewhere are left to the dispatch of their chunk. A lane
// writes one block (PARTS·8 values) of a row; values at or past H (a dense row's last block) are not
// written.
//
// Bindings (declared in src/gpu/kernels/linear/linear-kernels.ts, which generates their WGSL):
//   step      uniform        Step { n, pos0 }: n = tokens
//   (weights) the format's (shaders/lib/formats/<format>.wgsl), a row of H values
//   ids       storage, read  array<u32> [n]
//   out       storage, rw    array<f32> [n, H]
//   chunk     uniform        Chunk { row_start, rows }
// Dispatch: (ceil(ceil(H / (PARTS·8)) / WG), n)

override H: u32;
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.y;
  if (t >= step.n) { return; }
  let id = ids[t];
  if (id < chunk.row_start || id >= chunk.row_start + chunk.rows) { return; }
  let row = id - chunk.row_start;
  let block_k = PARTS * 8u;
  let blk = wid.x * WG + lid;           // values block_k·blk .. + block_k − 1
  if (blk * block_k >= H) { return; }
  let raw = w_raw(row, blk, H);
  for (var p = 0u; p < PARTS; p++) {
    let v = w_decode(raw, p);
    let k0 = blk * block_k + 8u * p;
    let o = t * H + k0;
    for (var e = 0u; e < 4u; e++) {
      if (k0 + e < H) { out[o + e] = v[0][e]; }
      if (k0 + 4u + e < H) { out[o + 4u + e] = v[1][e]; }
    }
  }
}
