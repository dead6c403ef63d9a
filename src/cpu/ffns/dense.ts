// The SwiGLU MLP on the WASM kernels (src/model/reference/ffns/dense.ts): hn [n, H] ->
// down(silu(gate · hn) · (up · hn)) [n, H], gate|up one linear over the stacked rows.
import type { DenseFfnWeights } from '../../model/types.ts';
import type { CpuFfnRow } from '../layer-contract.ts';
import type { WasmKernels, WasmLinear } from '../wasm-kernels.ts';

/** down(silu(gate·hn)·(up·hn)) for n rows at hn; returns the address of [n, down.rows]. */
export function swiglu(k: WasmKernels, gateUp: WasmLinear, down: WasmLinear, n: number, hn: number): number {
  const I = gateUp.rows / 2;
  const gu = k.alloc(n * 2 * I * 4);
  k.linearAt(gateUp, hn, n, gu, 2 * I);
  const act = k.alloc(n * I * 4);
  k.siluMulAt(gu, act, n, I);
  const y = k.alloc(n * down.rows * 4);
  k.linearAt(down, act, n, y, down.rows);
  return y;
}

export const denseFfn: CpuFfnRow<DenseFfnWeights> = {
  linears: (f) => [f.gateUp, f.down],
  place(k, f) {
    const gateUp = k.placeLinear(f.gateUp), down = k.placeLinear(f.down);
    return (_ctx, n, hn) => swiglu(k, gateUp, down, n, hn);
  },
};
