// decode_f32: packed-number helpers placed before every kernel when the f16 path is off (no shader-f16).
// Weights and the KV cache are stored in u32 words: two f16 or bf16 per word, element 2i in the low half.
// Everything is computed in f32; these only move bits.

fn unpack_f16x2(w: u32) -> vec2<f32> {
  return unpack2x16float(w);
}

// Four f16 in two words, element 0 in the low half of the first word.
fn unpack_f16x4(w: vec2<u32>) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}

fn pack_f16x2(v: vec2<f32>) -> u32 {
  return pack2x16float(v);
}

// bf16 is the upper 16 bits of an f32.
fn unpack_bf16x2(w: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}
