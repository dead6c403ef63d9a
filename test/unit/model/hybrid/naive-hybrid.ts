// A second, deliberately naive Qwen3.5 forward written from transformers' equations (Qwen3_5DecoderLayer,
// Qwen3NextAttention, Qwen3_5GatedDeltaNet with the torch fallbacks, Qwen3_5MoeSparseMoeBlock), straight
// from the HF-named tensors of a safetensors file and its raw config.json: the whole sequence at once in
// doubles, zero-centred norms as (1 + w), A_log through −exp, conv1d [C, 1, K] with K − 1 left zeros,
// q/k heads repeat_interleave'd over the value heads, packed experts chunked in two. It shares nothing
// with the loader or the reference engine but the bf16 decoding, so it checks both.

import { readSafetensorsHeader } from '../../../../src/model/formats/safetensors.ts';
import { toFloat32 } from '../../../../src/model/tensor-utils.ts';
import type { ModelSource } from '../../../../src/model/types.ts';

type Vec = number[];
interface T { shape: number[]; v: Float32Array }

export async function readHfTensors(source: ModelSource, file = 'model.safetensors'): Promise<Map<string, T>> {
  const { entries } = await readSafetensorsHeader(source, file);
  const out = new Map<string, T>();
  for (const e of entries) {
    const bytes = await source.readRange(file, e.start, e.end);
    out.set(e.name, { shape: e.shape, v: toFloat32({ name: e.name, dtype: e.dtype, shape: e.shape, bytes }) });
  }
  return out;
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>, bo = 0): number => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[bo + i]!; return s; };
const rows = (t: T, x: Vec, r0 = 0, r1 = t.shape[t.shape.length - 2] ?? 1, base = 0): Vec => {
  const K = t.shape[t.shape.length - 1]!;
  return Array.from({ length: r1 - r0 }, (_, r) => dot(x, t.v, base + (r0 + r) * K));
};
const rms = (x: Vec, w: ArrayLike<number>, eps: number, plusOne: boolean): Vec => {
  const inv = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length + eps);
  return x.map((v, i) => v * inv * (plusOne ? 1 + w[i]! : w[i]!));
};
const silu = (v: number) => v / (1 + Math.exp(-v));
const sigmoid = (v: number) => 1 / (1 + Math.exp(-v));
const softplus = (v: number) => (v > 20 ? v : Math.log1p(Math.exp(v)));
const l2 = (x: Vec) => { const inv = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) + 1e-6); return x.map((v) => v * inv); };

/** HF apply_rotary_pos_emb with partial rotary: rotate_half on the first R dims, the rest passes. */
function rope(x: Vec, pos: number, theta: number, R: number): Vec {
  const half = R / 2;
  const out = [...x];
  for (let i = 0; i < half; i++) {
    const a = pos / Math.pow(theta, (2 * i) / R);
    out[i] = x[i]! * Math.cos(a) - x[i + half]! * Math.sin(a);
    out[i + half] = x[i + half]! * Math.cos(a) + x[i]! * Math.sin(a);
  }
  return out;
}

export function naiveHybridLastLogits(t: Map<string, T>, config: Record<string, unknown>, ids: number[]): number[] {
  const c = (config.text_config ?? config) as Record<string, any>;
  const P = t.has('model.language_model.embed_tokens.weight') ? 'model.language_model.' : 'model.';
  const g = (name: string) => { const x = t.get(name); if (!x) throw new Error(`naive: no tensor ${name}`); return x; };
  const H = c.hidden_size as number, D = c.head_dim as number, Hq = c.num_attention_heads as number, Hkv = c.num_key_value_heads as number;
  const nk = c.linear_num_key_heads as number, nv = c.linear_num_value_heads as number, dk = c.linear_key_head_dim as number, dv = c.linear_value_head_dim as number;
  const K = c.linear_conv_kernel_dim as number, eps = c.rms_norm_eps as number;
  const R = Math.floor(D * c.rope_parameters.partial_rotary_factor), theta = c.rope_parameters.rope_theta as number;
  const embed = g(`${P}embed_tokens.weight`);
  let xs: Vec[] = ids.map((id) => Array.from(embed.v.subarray(id * H, (id + 1) * H)));
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const L = `${P}layers.${l}.`;
    const xn = xs.map((x) => rms(x, g(`${L}input_layernorm.weight`).v, eps, true));
    let mixed: Vec[];
    if (c.layer_types[l] === 'full_attention') {
      const q = xn.map((x) => rows(g(`${L}self_attn.q_proj.weight`), x));
      const k = xn.map((x) => rows(g(`${L}self_attn.k_proj.weight`), x));
      const v = xn.map((x) => rows(g(`${L}self_attn.v_proj.weight`), x));
      const qh = q.map((qt, p) => Array.from({ length: Hq }, (_, h) => rope(rms(qt.slice(2 * h * D, 2 * h * D + D), g(`${L}self_attn.q_norm.weight`).v, eps, true), p, theta, R)));
      const gate = q.map((qt) => Array.from({ length: Hq }, (_, h) => qt.slice(2 * h * D + D, 2 * h * D + 2 * D)));
      const kh = k.map((kt, p) => Array.from({ length: Hkv }, (_, h) => rope(rms(kt.slice(h * D, (h + 1) * D), g(`${L}self_attn.k_norm.weight`).v, eps, true), p, theta, R)));
      mixed = xn.map((_, p) => {
        const o: Vec = [];
        for (let h = 0; h < Hq; h++) {
          const kvh = Math.floor(h / (Hq / Hkv));
          const s = Array.from({ length: p + 1 }, (_, j) => dot(qh[p]![h]!, kh[j]![kvh]!) / Math.sqrt(D));
          const m = Math.max(...s), e = s.map((x) => Math.exp(x - m)), z = e.reduce((a, b) => a + b, 0);
          for (let d = 0; d < D; d++) o.push(e.reduce((acc, w, j) => acc + (w / z) * v[j]![kvh * D + d]!, 0) * sigmoid(gate[p]![h]![d]!));
        }
        return rows(g(`${L}self_attn.o_proj.weight`), o);
      });
    } else {
      const C = 2 * nk * dk + nv * dv;
      const qkv = xn.map((x) => rows(g(`${L}linear_attn.in_proj_qkv.weight`), x));
      const z = xn.map((x) => rows(g(`${L}linear_attn.in_proj_z.weight`), x));
      const b = xn.map((x) => rows(g(`${L}linear_attn.in_proj_b.weight`), x));
      const a = xn.map((x) => rows(g(`${L}linear_attn.in_proj_a.weight`), x));
      const w = g(`${L}linear_attn.conv1d.weight`).v;          // [C, 1, K]
      const conv = qkv.map((_, p) => Array.from({ length: C }, (_, ch) => {
        let s = 0;
        for (let j = 0; j < K; j++) { const src = p - (K - 1) + j; if (src >= 0) s += w[ch * K + j]! * qkv[src]![ch]!; }
        return silu(s);
      }));
      const A = Array.from(g(`${L}linear_attn.A_log`).v, (x) => -Math.exp(x));
      const dt = g(`${L}linear_attn.dt_bias`).v;
      const S = Array.from({ length: nv }, () => Array.from({ length: dk }, () => new Array<number>(dv).fill(0)));
      mixed = conv.map((cv, p) => {
        const o: Vec = [];
        for (let j = 0; j < nv; j++) {
          const kh = Math.floor(j / (nv / nk));                  // repeat_interleave of q and k heads
          const q = l2(cv.slice(kh * dk, (kh + 1) * dk)).map((x) => x / Math.sqrt(dk));
          const k = l2(cv.slice(nk * dk + kh * dk, nk * dk + (kh + 1) * dk));
          const v = cv.slice(2 * nk * dk + j * dv, 2 * nk * dk + (j + 1) * dv);
          const decay = Math.exp(A[j]! * softplus(a[p]![j]! + dt[j]!)), beta = sigmoid(b[p]![j]!);
          const s = S[j]!;
          for (const row of s) for (let c2 = 0; c2 < dv; c2++) row[c2]! *= decay;
          const delta = v.map((vv, c2) => (vv - s.reduce((acc, row, i) => acc + row[c2]! * k[i]!, 0)) * beta);
          s.forEach((row, i) => { for (let c2 = 0; c2 < dv; c2++) row[c2]! += k[i]! * delta[c2]!; });
          const oj = Array.from({ length: dv }, (_, c2) => s.reduce((acc, row, i) => acc + row[c2]! * q[i]!, 0));
          const normed = rms(oj, g(`${L}linear_attn.norm.weight`).v, eps, false);
          o.push(...normed.map((y, c2) => y * silu(z[p]![j * dv + c2]!)));
        }
        return rows(g(`${L}linear_attn.out_proj.weight`), o);
      });
    }
    xs = xs.map((x, p) => x.map((v, i) => v + mixed[p]![i]!));
    const hn = xs.map((x) => rms(x, g(`${L}post_attention_layernorm.weight`).v, eps, true));
    const ffn = hn.map((x) => (c.num_experts ? moe(x) : swiglu(x, `${L}mlp.`)));
    xs = xs.map((x, p) => x.map((v, i) => v + ffn[p]![i]!));

    function swiglu(x: Vec, pre: string): Vec {
      const gt = rows(g(`${pre}gate_proj.weight`), x), up = rows(g(`${pre}up_proj.weight`), x);
      return rows(g(`${pre}down_proj.weight`), gt.map((v, i) => silu(v) * up[i]!));
    }
    function moe(x: Vec): Vec {
      const E = c.num_experts as number, I = c.moe_intermediate_size as number;
      const logits = rows(g(`${L}mlp.gate.weight`), x);
      const m = Math.max(...logits), e = logits.map((v) => Math.exp(v - m)), zz = e.reduce((s, v) => s + v, 0);
      const top = e.map((v, i) => [v / zz, i] as const).sort((p1, p2) => p2[0] - p1[0] || p1[1] - p2[1]).slice(0, c.num_experts_per_tok);
      const sum = top.reduce((s, [pr]) => s + pr, 0);
      const out = new Array<number>(H).fill(0);
      const gu = g(`${L}mlp.experts.gate_up_proj`), dn = g(`${L}mlp.experts.down_proj`);
      for (const [pr, ex] of top) {
        const gate = rows(gu, x, 0, I, ex * 2 * I * H), up = rows(gu, x, I, 2 * I, ex * 2 * I * H);
        const y = rows(dn, gate.map((v, i) => silu(v) * up[i]!), 0, H, ex * H * I);
        y.forEach((v, i) => { out[i]! += (pr / sum) * v; });
        void E;
      }
      const shared = swiglu(x, `${L}mlp.shared_expert.`);
      const sg = sigmoid(rows(g(`${L}mlp.shared_expert_gate.weight`), x)[0]!);
      return out.map((v, i) => v + sg * shared[i]!);
    }
  }
  const last = rms(xs[xs.length - 1]!, g(`${P}norm.weight`).v, eps, true);
  const head = t.get('lm_head.weight') ?? embed;
  return rows(head, last, 0, head.shape[0]);
}
