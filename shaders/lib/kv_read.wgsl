// kv_read: one cached K or V pair (elements 2w and 2w + 1 of KV head kvh at token j) as f32, from
//   the f16 cache (KV_Q8 = 0): [ctx, HKV·D/2] f16 pairs, or
//   the q8_0 cache (KV_Q8 = 1): int8 quants [ctx, HKV, NB·32] (4 to a word, from word 0), then f16
//   scales [ctx, HKV, NB] (2 to a word, from word KV_SCALES); NB = ⌈D/32⌉, the value is q·scale.
// A kernel using it declares the overrides HKV, D, KV_Q8 and KV_SCALES and the kcache, vcache bindings.

// (quant word, bit shift of element 2w, scale word, scale half) of a pair in the q8_0 cache.
fn q8_at(j: u32, kvh: u32, w: u32) -> vec4<u32> {
  let nb = (D + 31u) / 32u;
  let head = j * HKV + kvh;
  let e = head * nb * 32u + 2u * w;  // the pair's first byte (even: both bytes share a word)
  let s = head * nb + (2u * w) / 32u;
  return vec4<u32>(e / 4u, (e % 4u) * 8u, KV_SCALES + s / 2u, s % 2u);
}

fn q8_pair(qw: u32, shift: u32, sw: u32, hi: u32) -> vec2<f32> {
  let q = bitcast<i32>(qw);
  let d = unpack2x16float(sw)[hi];
  return vec2<f32>(f32(extractBits(q, shift, 8u)), f32(extractBits(q, shift + 8u, 8u))) * d;
}

fn k_pair(j: u32, kvh: u32, w: u32) -> vec2<f32> {
  if (KV_Q8 == 0u) { return unpack_f16x2(kcache[(j * HKV + kvh) * (D / 2u) + w]); }
  let at = q8_at(j, kvh, w);
  return q8_pair(kcache[at.x], at.y, kcache[at.z], at.w);
}

fn v_pair(j: u32, kvh: u32, w: u32) -> vec2<f32> {
  if (KV_Q8 == 0u) { return unpack_f16x2(vcache[(j * HKV + kvh) * (D / 2u) + w]); }
  let at = q8_at(j, kvh, w);
  return q8_pair(vcache[at.x], at.y, vcache[at.z], at.w);
}
