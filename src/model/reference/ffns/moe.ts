// The sparse MLP on the CPU: the routed experts (../moe.ts, HF Qwen3MoeSparseMoeBlock) on hn [n, H],
// and in Qwen3.5 MoE the shared expert: y = moe(hn) + f32(σ(shared_gate · hn) · shared(hn)).
import type { MoeFfnWeights } from '../../types.ts';
import { sigmoid } from '../gated-delta.ts';
import type { ReferenceFfnRow } from '../layer-contract.ts';
import { moeForward } from '../moe.ts';
import { matmul, siluMul } from '../ops.ts';

export const moeFfn: ReferenceFfnRow<MoeFfnWeights> = {
  bind(f) {
    return (ctx, hn, n) => {
      const w = ctx.weight, m = f.moe;
      const routed = moeForward(m, { router: w(m.router), gate: w(m.gate), up: w(m.up), down: w(m.down) }, hn, n, ctx.onExpert).out; // [n, H]
      const s = f.shared;
      if (!s) return routed;
      const shared = matmul(w(s.down), siluMul(matmul(w(s.gateUp), hn, n), s.intermediate), n);          // [n, H]
      const gate = matmul(w(s.gate), hn, n);                                                              // [n, 1]
      const H = hn.length / n;
      for (let t = 0; t < n; t++) {
        const sg = sigmoid(gate[t]!);
        for (let h = 0; h < H; h++) routed[t * H + h] = routed[t * H + h]! + Math.fround(sg * shared[t * H + h]!);
      }
      return routed;
    };
  },
};
