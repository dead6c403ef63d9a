// embed_q4: embedding gather for an MLC q4f16_1 table [V, H] held in row chunks (w = (q − 7)·scale).
// Each dispatch covers one chunk (rows [row_start, row_start + rows)).
//
// Bindings (declared in src/gpu/kernels/linear/embed-q4.ts, which generates their WGSL):
//   step    uniform        Step { n, pos0 }: n = tokens
//   qweight storage, read  array<u32> [chunk rows, H/8]
//   scales  storage, read  array<u32> f16 pairs of [chunk rows, H/32]
//   ids     storage, read  array<u32> [n]
//   out     storage, rw    array<f32> [n, H]
//   chunk   uniform        Chunk { row_start, rows }
// Dispatch: (ceil(H / 8 / WG), n)

override H: u32;                 // multiple of 32
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.y;
  if (t >= step.n) { return; }
  let id = ids[t];
  if (id < chunk.row_start || id >= chunk.row_start + chunk.rows) { return; }
  let row = id - chunk.row_start;
  let w = wid.x * WG + lid;             // word: elements 8w .. 8w + 7
  if (w >= H / 8u) { return; }
  let q = qweight[row * (H / 8u) + w];
  let si = row * (H / 32u) + w / 4u;
  let pair = unpack_f16x2(scales[si >> 1u]);
  let sc = select(pair.x, pair.y, (si & 1u) == 1u);
  for (var j = 0u; j < 8u; j++) {
    out[t * H + w * 8u + j] = (f32((q >> (4u * j)) & 0xfu) - 7.0) * sc;
  }
}
