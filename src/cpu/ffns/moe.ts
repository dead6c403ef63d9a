// The sparse MLP on the WASM kernels (src/model/reference/moe.ts and ffns/moe.ts, HF
// Qwen3MoeSparseMoeBlock): router logits [n, E] by a linear, the reference's routing (routeToken: softmax
// in f64, top-k, ties to the lower id), then each chosen expert once on all its tokens, reading only its
// own rows of the stacked gate/up/down blocks; y[t] = Σ in ascending expert id of f32(p_e · expert_e).
// Qwen3.5 MoE adds the shared expert: y += f32(σ(shared_gate · hn) · shared(hn)).
import { routeToken } from '../../model/reference/moe.ts';
import type { MoeFfnWeights } from '../../model/types.ts';
import type { CpuFfnRow } from '../layer-contract.ts';
import { swiglu } from './dense.ts';

export const moeFfn: CpuFfnRow<MoeFfnWeights> = {
  linears: (f) => [f.moe.router, f.moe.gate, f.moe.up, f.moe.down, ...(f.shared ? [f.shared.gateUp, f.shared.down, f.shared.gate] : [])],
  place(k, f) {
    const m = f.moe;
    const router = k.placeLinear(m.router), gate = k.placeLinear(m.gate), up = k.placeLinear(m.up), down = k.placeLinear(m.down);
    const shared = f.shared && { gateUp: k.placeLinear(f.shared.gateUp), down: k.placeLinear(f.shared.down), gate: k.placeLinear(f.shared.gate) };
    const E = m.numExperts, I = m.intermediate;
    return (ctx, n, hn) => {
      const H = ctx.config.hiddenSize;
      const lp = k.alloc(n * E * 4);
      k.linearAt(router, hn, n, lp, E);
      const logits = k.f32(lp, n * E).slice();
      const routes = Array.from({ length: n }, (_, t) => routeToken(logits.subarray(t * E, (t + 1) * E), m.topK, m.normTopkProb));
      const out = new Float32Array(n * H);
      for (let e = 0; e < E; e++) {
        const tokens = routes.flatMap((r, t) => (r.experts.includes(e) ? [t] : []));
        if (tokens.length === 0) continue;
        ctx.onExpert?.(e, tokens.length);
        const mt = tokens.length;
        k.frame(() => {
          const xp = k.alloc(mt * H * 4), gu = k.alloc(mt * 2 * I * 4), act = k.alloc(mt * I * 4), yp = k.alloc(mt * H * 4);
          const x = k.f32(xp, mt * H), all = k.f32(hn, n * H);
          tokens.forEach((t, j) => x.set(all.subarray(t * H, (t + 1) * H), j * H));
          // gate rows of expert e into columns [0, I) of gu, up rows into [I, 2I): silu·mul's layout
          k.linearAt(gate, xp, mt, gu, 2 * I, e * I, (e + 1) * I);
          k.linearAt(up, xp, mt, gu + I * 4, 2 * I, e * I, (e + 1) * I);
          k.siluMulAt(gu, act, mt, I);
          k.linearAt(down, act, mt, yp, H, e * H, (e + 1) * H);
          const y = k.f32(yp, mt * H);
          tokens.forEach((t, j) => {
            const p = routes[t]!.weights[routes[t]!.experts.indexOf(e)]!;
            for (let h = 0; h < H; h++) out[t * H + h] = out[t * H + h]! + Math.fround(p * y[j * H + h]!);
          });
        });
      }
      if (shared) {
        const sp = swiglu(k, shared.gateUp, shared.down, n, hn);
        const gp = k.alloc(n * 4);
        k.linearAt(shared.gate, hn, n, gp, 1);
        const s = k.f32(sp, n * H), g = k.f32(gp, n);
        for (let t = 0; t < n; t++) {
          const sg = 1 / (1 + Math.exp(-g[t]!));
          for (let h = 0; h < H; h++) out[t * H + h] = out[t * H + h]! + Math.fround(sg * s[t * H + h]!);
        }
      }
      return k.input(out);
    };
  },
};
