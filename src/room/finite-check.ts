// Activations cross a boundary between devices (a forward a guest receives, each stage's result the host
// gets back): every value must be a finite number before any engine runs it, or a NaN/±Inf row would sit
// in a KV cache (f16 and q8_0 alike) and poison every later token until a truncate. The check names the
// device the rows came from so the error says who sent them.
import { RoomError } from './errors.ts';

/** The `error` frame code a guest answers with when it refused the rows it was given. */
export const NON_FINITE_CODE = 'non-finite';

/** Activations with a value that is not a finite number (NaN, ±Infinity). */
export class NonFiniteActivationsError extends RoomError {
  override name = 'NonFiniteActivationsError';
  override readonly code = NON_FINITE_CODE;
}

/** Index of the first NaN or ±Infinity, or −1. */
export function firstNonFinite(a: Float32Array): number {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) return i;
  return -1;
}

/** `rows` unchanged when every value is finite; otherwise NonFiniteActivationsError naming `from` and `what`. */
export function requireFinite(rows: Float32Array, from: string, what: string): Float32Array {
  const bad = firstNonFinite(rows);
  if (bad >= 0) throw new NonFiniteActivationsError(`${from} sent ${rows[bad]} in its activations (value ${bad} of ${rows.length}, ${what}); nothing was run on them`);
  return rows;
}
