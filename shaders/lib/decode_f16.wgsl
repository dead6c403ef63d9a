// decode_f16: the same helpers as decode_f32.wgsl, through native f16 types (adapter has shader-f16;
// the module starts with `enable f16;`). Same bits in and out; arithmetic stays f32 so both paths agree
// with the reference.

fn unpack_f16x2(w: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<vec2<f16>>(w));
}

// Four f16 in two words, element 0 in the low half of the first word.
fn unpack_f16x4(w: vec2<u32>) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<f16>>(w));
}

fn pack_f16x2(v: vec2<f32>) -> u32 {
  return bitcast<u32>(vec2<f16>(v));
}

// bf16 is the upper 16 bits of an f32.
fn unpack_bf16x2(w: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}
