// embed_ggml: embedding gather for a ggml block-type table [V, H] held in row chunks (the type's blocks:
// shaders/lib/ggml/<type>.wgsl), dequantized as ggml does. Each dispatch covers one chunk (rows
// [row_start, row_start + rows)); tokens whose id lies elsewhere are left to the dispatch of their chunk.
// A lane writes one 32-value unit of a row.
//
// Bindings (declared in src/gpu/kernels/linear/ggml.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: n = tokens
//   weight storage, read  array<vec4<u32>>: the chunk's rows as stored, H / QK · QBYTES bytes a row
//   ids    storage, read  array<u32> [n]
//   out    storage, rw    array<f32> [n, H]
//   chunk  uniform        Chunk { row_start, rows }
// Dispatch: (ceil(H / 32 / WG), n)

override H: u32;                 // multiple of QK
override WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.y;
  if (t >= step.n) { return; }
  let id = ids[t];
  if (id < chunk.row_start || id >= chunk.row_start + chunk.rows) { return; }
  let row = id - chunk.row_start;
  let unit = wid.x * WG + lid;          // values 32·unit .. 32·unit + 31
  if (unit >= H / 32u) { return; }
  let units = QK / 32u;
  let raw = unit_raw(row * (H / QK * QBYTES) + (unit / units) * QBYTES, unit % units);
  for (var p = 0u; p < 4u; p++) {
    let v = unit_part(raw, p);
    let o = t * H + 32u * unit + 8u * p;
    for (var e = 0u; e < 4u; e++) {
      out[o + e] = v[0][e];
      out[o + 4u + e] = v[1][e];
    }
  }
}
