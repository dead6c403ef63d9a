// kv_store_q8_0: quantize a step's keys and values (f32, staged by qk_norm_rope / gated_qk_norm_rope)
// into the q8_0 KV cache at positions pos0 .. pos0 + n − 1 (layout: shaders/lib/kv_read.wgsl), as
// llama.cpp's quantize_row_q8_0_ref does per block of 32 values of a head: d = max|x| / 127,
// q = round(x / d) half away from zero with id = 1/d, d kept as f16 (src/model/kv-quant.ts, the
// reference). A thread owns one scale word, so the (at most two) blocks whose scales share it: the
// other half of a word at the step's edge belongs to a token already stored and is kept.
//
// Bindings (declared in src/gpu/kernels/attention/kv-store-q8-0.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: tokens at positions pos0 .. pos0 + n − 1
//   kstage storage, read  array<f32> [n, HKV·D] this step's keys (normalised and rotated)
//   vstage storage, read  array<f32> [n, HKV·D] this step's values
//   kcache storage, rw    array<u32> q8_0 K cache: quants from word 0, scales from word KV_SCALES
//   vcache storage, rw    array<u32> q8_0 V cache, the same layout
// Dispatch: (⌈(n·HKV·NB + 1) / 2 / WG⌉, 1, 2): z = 0 keys, z = 1 values

override HKV: u32;
override D: u32;                 // even
override KV_SCALES: u32;         // ctx·HKV·NB·8
override WG: u32 = 64u;

fn staged(is_v: bool, i: u32) -> f32 {
  if (is_v) { return vstage[i]; }
  return kstage[i];
}

fn load_word(is_v: bool, i: u32) -> u32 {
  if (is_v) { return vcache[i]; }
  return kcache[i];
}

fn store_word(is_v: bool, i: u32, v: u32) {
  if (is_v) { vcache[i] = v; } else { kcache[i] = v; }
}

// Quantize flat block b (token-major over the cache) from the stage; returns its scale d (f32).
fn store_block(is_v: bool, b: u32) -> f32 {
  let nb = (D + 31u) / 32u;
  let t = b / (HKV * nb) - step.pos0;
  let rest = b % (HKV * nb);
  let e0 = (rest / nb) * D + (rest % nb) * 32u;   // the block's first value within the token's row
  let count = min(32u, D - (rest % nb) * 32u);
  let src = t * HKV * D;
  var amax = 0.0;
  for (var j = 0u; j < count; j++) { amax = max(amax, abs(staged(is_v, src + e0 + j))); }
  let d = amax / 127.0;
  let id = select(0.0, 1.0 / d, d != 0.0);
  for (var w = 0u; w < 8u; w++) {
    var word = 0u;
    for (var k = 0u; k < 4u; k++) {
      let j = 4u * w + k;
      var qv = 0;
      if (j < count) {
        let x = staged(is_v, src + e0 + j) * id;
        qv = i32(sign(x) * floor(abs(x) + 0.5));
      }
      word |= (bitcast<u32>(qv) & 0xffu) << (8u * k);
    }
    store_word(is_v, b * 8u + w, word);
  }
  return d;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let is_v = gid.z == 1u;
  let per_token = HKV * ((D + 31u) / 32u);
  let b0 = step.pos0 * per_token;
  let b1 = (step.pos0 + step.n) * per_token;
  let sw = b0 / 2u + gid.x;          // the scale word this thread owns: blocks 2·sw and 2·sw + 1
  if (2u * sw >= b1) { return; }
  var halves = unpack2x16float(load_word(is_v, KV_SCALES + sw));
  for (var i = 0u; i < 2u; i++) {
    let b = 2u * sw + i;
    if (b >= b0 && b < b1) { halves[i] = store_block(is_v, b); }
  }
  store_word(is_v, KV_SCALES + sw, pack2x16float(halves));
}
