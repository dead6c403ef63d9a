// The SwiGLU MLP on the device (the reference: src/model/reference/ffns/dense.ts), reading act.xn:
//   linear gate|up + silu·mul  xn -> act    [n, I]  (unfused: linear -> gu [n, 2·I], then silu_mul, if split;
//                                                    decode, unsplit: x with the post-attention norm folded in)
//   linear down                act -> x (+=)        residual fused in the epilogue
import type { DenseFfnWeights } from '../../model/types.ts';
import { uploadLinear, type GpuLinear } from '../gpu-weights.ts';
import { Epilogue, linearOps, normToFold, type FoldedNorm } from '../kernels/linear/linear.ts';
import { siluMulOp } from '../kernels/common/silu-mul.ts';
import type { Activations, GpuFfnRow } from '../layer-contract.ts';
import type { Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';

export const denseFfn: GpuFfnRow<DenseFfnWeights> = {
  linears: (f) => [f.gateUp, f.down],
  upload({ device, cache, cfg, act, maxBindingBytes, name, norm }, f) {
    const gateUp = uploadLinear(device, f.gateUp, maxBindingBytes);
    const down = uploadLinear(device, f.down, maxBindingBytes);
    const foldNorm = normToFold(norm, gateUp);     // one chunk: also the fused silu epilogue's condition
    return { linears: [gateUp, down], ops: swigluOps(cache, gateUp, down, act, cfg.intermediateSize, name, foldNorm), normFolded: foldNorm !== undefined };
  },
};

/** The SwiGLU MLP: gate|up with silu·mul (fused in the matvec epilogue unless the weight is split), down += x. */
export function swigluOps(cache: PipelineCache, gateUp: GpuLinear, down: GpuLinear, act: Activations, I: number, name: string, foldNorm?: FoldedNorm): Op[] {
  const { step } = act;
  const H = down.rows;
  const ops: Op[] = [];
  if (gateUp.chunks.length === 1) {
    ops.push(...linearOps(cache, gateUp, { step, x: act.xn, y: act.act, outStride: I, epilogue: Epilogue.SILU_GATE_UP, foldNorm }));
  } else {
    if (foldNorm) throw new Error(`${name}: a split gate|up cannot fold the norm`);
    if (!act.gu) throw new Error('engine: gate|up is split but no [T, 2I] buffer was made');
    ops.push(...linearOps(cache, gateUp, { step, x: act.xn, y: act.gu, outStride: 2 * I, epilogue: Epilogue.STORE }));
    ops.push(siluMulOp(cache, { step, gu: act.gu, out: act.act }, I, `${name} silu_mul`));
  }
  ops.push(...linearOps(cache, down, { step, x: act.act, y: act.x, outStride: H, epilogue: Epilogue.ADD_RESIDUAL }));
  return ops;
}
