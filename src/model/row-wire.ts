// A decode row as it crosses to the one engine worker (workers/engine.worker.ts): a TokenConstraint's `overruled` callback cannot be cloned, so it
// travels as `report: true` and the worker's answer says per row whether the top choice was overruled.
import type { RowSampling, SamplingOptions, TokenConstraint } from './engine-types.ts';

export type WireConstraint = Omit<TokenConstraint, 'overruled'> & { report?: boolean };
export type WireRow = { opts: SamplingOptions; constraint?: WireConstraint };

/** Page side: the row without its constraint's callback (`report` asks for it instead). */
export function toWire(r: RowSampling): WireRow {
  const c = r.constraint;
  if (!c) return { opts: r.opts };
  const { overruled, ...plain } = c;
  return { opts: r.opts, constraint: overruled ? { ...plain, report: true } : plain };
}

/** Worker side: the row as the engine takes it; a `report` turns into a callback setting flags[i]. */
export function fromWire(r: WireRow, flags: boolean[], i: number): RowSampling {
  const c = r.constraint;
  if (!c) return { opts: r.opts };
  const { report, ...plain } = c;
  return { opts: r.opts, constraint: report ? { ...plain, overruled: () => { flags[i] = true; } } : plain };
}
