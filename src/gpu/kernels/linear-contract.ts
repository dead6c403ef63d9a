// What every linear kernel (one per weight format) shares: the epilogue codes, the per-chunk uniform and
// what a caller asks of a linear (where x comes from, where y goes, how it is combined).

/** How a linear's result is written: the codes are shared with the WGSL as constants of these names. */
export const Epilogue = {
  /** y = x·Wᵀ */
  STORE: 0,
  /** y += x·Wᵀ (the residual stream) */
  ADD_RESIDUAL: 1,
  /** y[r] = silu(g[r])·u[r] for W = gate rows then up rows (out_rows = rows / 2) */
  SILU_GATE_UP: 2,
} as const;

export type Epilogue = (typeof Epilogue)[keyof typeof Epilogue];

/** A chunk of weight rows: the kernel's view of which columns of y it writes. */
export const CHUNK_FIELDS = ['k', 'out_stride', 'row_offset', 'out_rows', 'epilogue'] as const;

export interface LinearTarget {
  step: GPUBuffer;
  x: GPUBuffer;                // [n, K]
  y: GPUBuffer;                // [n, outStride]
  outStride: number;
  epilogue: Epilogue;
}
