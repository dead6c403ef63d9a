// embed_dense: embedding gather for a dense F32 / F16 / BF16 table [V, H] held in row chunks.
// Each dispatch covers one chunk (rows [row_start, row_start + rows)); tokens whose id lies
// elsewhere are left to the dispatch of their chunk.
//
// Bindings (declared in src/gpu/kernels/linear/embed-dense.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   table  storage, read  array<u32> [chunk rows, ROW_WORDS] (F32 one value a word, F16/BF16 two;
//                           rows padded to a whole 16 bytes)
//   ids    storage, read  array<u32> [n]
//   out    storage, rw    array<f32> [n, H]
//   chunk  uniform        Chunk { row_start, rows }
// Dispatch: (ceil(ceil(H / 2) / WG), n)

override H: u32;
override WDTYPE: u32;            // 0 F32, 1 F16, 2 BF16
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.y;
  if (t >= step.n) { return; }
  let id = ids[t];
  if (id < chunk.row_start || id >= chunk.row_start + chunk.rows) { return; }
  let row = id - chunk.row_start;
  let pair = wid.x * WG + lid;          // elements 2·pair, 2·pair + 1
  let k0 = pair * 2u;
  if (k0 >= H) { return; }
  var v: vec2<f32>;
  if (WDTYPE == 0u) {
    let row_words = (H + 3u) / 4u * 4u;
    v = vec2<f32>(bitcast<f32>(table[row * row_words + k0]), 0.0);
    if (k0 + 1u < H) { v.y = bitcast<f32>(table[row * row_words + k0 + 1u]); }
  } else {
    let w = table[row * ((H + 7u) / 8u * 4u) + pair];
    v = select(unpack_bf16x2(w), unpack_f16x2(w), WDTYPE == 1u);
  }
  out[t * H + k0] = v.x;
  if (k0 + 1u < H) { out[t * H + k0 + 1u] = v.y; }
}
