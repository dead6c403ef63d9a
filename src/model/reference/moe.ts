// The Qwen3 MoE sparse block on the CPU (HF Qwen3MoeSparseMoeBlock), for the reference engine:
//   logits = hn · routerᵀ                         [n, E]
//   p = softmax(logits) per token (in doubles, stored as f32); top-k experts by p, ties to the lower id
//   p_e /= Σ top-k p (in doubles, stored as f32) when normTopkProb
//   y[t] = Σ over its experts in ascending id of f32(p_e · down_e(silu(gate_e·hn) · up_e·hn))
// Tokens are grouped by expert (prefill runs each expert once on all its tokens); each expert reads
// only its own rows of the stacked gate/up/down matrices. The sum order per token is fixed
// (ascending expert id, f32 adds), so the GPU can match it exactly.

import type { Linear, MoeMlpWeights } from '../types.ts';
import { linearRowsToFloat32 } from '../tensor-utils.ts';
import { matmul, siluMul, type DecodedLinear } from './ops.ts';

/** Routing of one token: its experts in ascending id and their weights. */
export interface Route { experts: number[]; weights: number[] }

/** HF's routing from router logits [E] of one token. */
export function routeToken(logits: Float32Array, topK: number, normTopkProb: boolean): Route {
  const E = logits.length;
  let max = -Infinity;
  for (const v of logits) if (v > max) max = v;
  let z = 0;
  const e = new Float64Array(E);
  for (let i = 0; i < E; i++) { e[i] = Math.exp(logits[i]! - max); z += e[i]!; }
  const p = Float32Array.from(e, (v) => v / z);
  const order = Array.from({ length: E }, (_, i) => i).sort((a, b) => p[b]! - p[a]! || a - b).slice(0, topK);
  let sum = 0;
  for (const i of order) sum += p[i]!;
  const experts = [...order].sort((a, b) => a - b);
  return { experts, weights: experts.map((i) => (normTopkProb ? Math.fround(p[i]! / sum) : p[i]!)) };
}

/** Rows [r0, r1) of a (maybe decoded) Linear as a decoded matrix. */
function rowsOf(w: Linear | DecodedLinear, r0: number, r1: number, name: string): DecodedLinear {
  const values = w.kind === 'f32' ? w.values.subarray(r0 * w.cols, r1 * w.cols) : linearRowsToFloat32(w, r0, r1);
  return { kind: 'f32', rows: r1 - r0, cols: w.cols, values, name };
}

export interface MoeWeightsView {
  router: Linear | DecodedLinear;
  gate: Linear | DecodedLinear;
  up: Linear | DecodedLinear;
  down: Linear | DecodedLinear;
}

/** The sparse MLP on hn [n, H] → [n, H]; `onExpert` sees every (expert, tokens) run, for accounting. */
export function moeForward(m: MoeMlpWeights, w: MoeWeightsView, hn: Float32Array, n: number,
  onExpert?: (expert: number, tokens: number) => void): { out: Float32Array; routes: Route[] } {
  const H = hn.length / n, E = m.numExperts, I = m.intermediate;
  const logits = matmul(w.router, hn, n);                                   // [n, E]
  const routes = Array.from({ length: n }, (_, t) => routeToken(logits.subarray(t * E, (t + 1) * E), m.topK, m.normTopkProb));
  const out = new Float32Array(n * H);
  for (let e = 0; e < E; e++) {
    const tokens = routes.flatMap((r, t) => (r.experts.includes(e) ? [t] : []));
    if (tokens.length === 0) continue;
    onExpert?.(e, tokens.length);
    const x = new Float32Array(tokens.length * H);                         // [m, H] the expert's tokens
    tokens.forEach((t, j) => x.set(hn.subarray(t * H, (t + 1) * H), j * H));
    const g = matmul(rowsOf(w.gate, e * I, (e + 1) * I, `expert ${e} gate`), x, tokens.length);   // [m, I]
    const u = matmul(rowsOf(w.up, e * I, (e + 1) * I, `expert ${e} up`), x, tokens.length);       // [m, I]
    const gu = new Float32Array(tokens.length * 2 * I);
    for (let j = 0; j < tokens.length; j++) {
      gu.set(g.subarray(j * I, (j + 1) * I), j * 2 * I);
      gu.set(u.subarray(j * I, (j + 1) * I), j * 2 * I + I);
    }
    const y = matmul(rowsOf(w.down, e * H, (e + 1) * H, `expert ${e} down`), siluMul(gu, I), tokens.length); // [m, H]
    tokens.forEach((t, j) => {
      const p = routes[t]!.weights[routes[t]!.experts.indexOf(e)]!;
      for (let h = 0; h < H; h++) out[t * H + h] = out[t * H + h]! + Math.fround(p * y[j * H + h]!);
    });
  }
  return { out, routes };
}
