// The SwiGLU MLP on the CPU: hn [n, H] -> down(silu(gate · hn) · (up · hn)) [n, H], gate|up one matmul.
import type { DenseFfnWeights } from '../../types.ts';
import type { ReferenceFfnRow } from '../layer-contract.ts';
import { matmul, siluMul } from '../ops.ts';

export const denseFfn: ReferenceFfnRow<DenseFfnWeights> = {
  bind(f) {
    const I = f.gateUp.rows / 2;
    return (ctx, hn, n) => {
      const gateUp = matmul(ctx.weight(f.gateUp), hn, n);                                 // [n, 2·I]
      const act = siluMul(gateUp, I);                                                     // [n, I]
      return matmul(ctx.weight(f.down), act, n);                                          // [n, H]
    };
  },
};
