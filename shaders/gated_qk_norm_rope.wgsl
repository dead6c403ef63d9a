// gated_qk_norm_rope: qk_norm_rope for the hybrid's gated attention (HF Qwen3_5Attention). The fused
// projection gives each query head D query values then D gate values (q_proj), then k, then v. Each q
// and k head is RMS-normalised, its first ROT dims rotated by RoPE neox (pair i with i + ROT/2; the
// rest pass through), q written as f32, the gate copied out for sigmoid_gate, and k, v stored into the
// f16 KV cache. The cos/sin table is the CPU's (src/gpu/layers.ts ropeTable over ROT dims).
//
// Bindings (declared in src/gpu/kernels/hybrid/gated-qk-norm-rope.ts, which generates their WGSL):
//   step   uniform        Step { n, pos0 }: tokens at positions pos0 .. pos0 + n − 1
//   qkv    storage, read  array<f32> [n, 2·HQ·D + 2·HKV·D]: head h's query at 2hD, its gate at 2hD + D
//   qnorm  storage, read  array<f32> [D]
//   knorm  storage, read  array<f32> [D]
//   rope   storage, read  array<vec2<f32>> [ctx, ROT/2] (cos, sin)
//   q      storage, rw    array<f32> [n, HQ·D]
//   gate   storage, rw    array<f32> [n, HQ·D]
//   kcache storage, rw    array<u32> [ctx, HKV·D/2] f16 pairs; KV_STAGE = 1 (a q8_0 cache): the step's
//                         keys as f32 bits [n, HKV·D], for kv_store_q8_0 to quantize
//   vcache storage, rw    array<u32> the same for values
// Dispatch: (HQ + 2·HKV, n): one workgroup per head per token.

override HQ: u32;
override HKV: u32;
override D: u32;                 // even, ≤ 512
override ROT: u32;               // even, ≤ D
override EPS: f32;
override WG: u32 = 64u;          // power of two
override KV_STAGE: u32 = 0u;     // 1: write K/V as f32 into a stage (see kcache), not f16 into the cache

var<workgroup> xs: array<f32, 512>;
var<workgroup> sums: array<f32, WG>;

// Element e of the rotated head (xs holds the normalised head).
fn rotated(e: u32, pos: u32) -> f32 {
  let half = ROT / 2u;
  if (e < half) {
    let cs = rope[pos * half + e];
    return xs[e] * cs.x - xs[e + half] * cs.y;
  }
  if (e < ROT) {
    let cs = rope[pos * half + e - half];
    return xs[e] * cs.x + xs[e - half] * cs.y;
  }
  return xs[e];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let head = wid.x;
  let t = wid.y;
  let width = 2u * (HQ + HKV) * D;
  let pos = step.pos0 + t;
  let kv_row = pos * HKV * D / 2u;
  let is_q = head < HQ;

  if (head >= HQ + HKV) {        // v head: copy into the cache as f16
    let vh = head - HQ - HKV;
    let src = t * width + 2u * HQ * D + HKV * D + vh * D;
    for (var w = lid; w < D / 2u; w += WG) {
      let v = vec2<f32>(qkv[src + 2u * w], qkv[src + 2u * w + 1u]);
      if (KV_STAGE == 1u) {
        vcache[(t * HKV + vh) * D + 2u * w] = bitcast<u32>(v.x);
        vcache[(t * HKV + vh) * D + 2u * w + 1u] = bitcast<u32>(v.y);
      } else {
        vcache[kv_row + vh * D / 2u + w] = pack_f16x2(v);
      }
    }
    return;
  }

  let src = select(t * width + 2u * HQ * D + (head - HQ) * D, t * width + 2u * head * D, is_q);
  if (is_q) {
    for (var i = lid; i < D; i += WG) { gate[(t * HQ + head) * D + i] = qkv[src + D + i]; }
  }
  var ss = 0.0;
  for (var i = lid; i < D; i += WG) { let v = qkv[src + i]; ss += v * v; }
  sums[lid] = ss;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { sums[lid] += sums[lid + stride]; }
    workgroupBarrier();
  }
  let inv = 1.0 / sqrt(sums[0] / f32(D) + EPS);
  for (var i = lid; i < D; i += WG) {
    let w = select(knorm[i], qnorm[i], is_q);
    xs[i] = qkv[src + i] * inv * w;
  }
  workgroupBarrier();

  if (is_q) {
    for (var i = lid; i < D; i += WG) { q[(t * HQ + head) * D + i] = rotated(i, pos); }
  } else {
    let kh = head - HQ;
    for (var w = lid; w < D / 2u; w += WG) {
      let v = vec2<f32>(rotated(2u * w, pos), rotated(2u * w + 1u, pos));
      if (KV_STAGE == 1u) {
        kcache[(t * HKV + kh) * D + 2u * w] = bitcast<u32>(v.x);
        kcache[(t * HKV + kh) * D + 2u * w + 1u] = bitcast<u32>(v.y);
      } else {
        kcache[kv_row + kh * D / 2u + w] = pack_f16x2(v);
      }
    }
  }
}
