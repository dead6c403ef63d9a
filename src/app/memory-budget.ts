// How much memory this device offers the room: the user's choice in GiB (start screen, join form, guest
// screen, ?mem=), or the default the room derives (src/room/capabilities.ts: half of
// navigator.deviceMemory, else 2 GiB). The dealer gives a device no more layers than its budget holds.
import { measureCapabilities } from '../room/capabilities.ts';

const GiB = 2 ** 30;
export const MIN_MEMORY_GIB = 0.125;
export const MAX_MEMORY_GIB = 1024;

/** A memory budget the app cannot use; the message says what is allowed. */
export class MemoryBudgetError extends Error {
  override name = 'MemoryBudgetError';
  readonly code = 'memory-budget';
}

/** "1.5" (GiB, as typed) → bytes; '' → undefined (the device's default). */
export function memoryBudgetFromGiB(text: string): number | undefined {
  const raw = text.trim();
  if (raw === '') return undefined;
  const n = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || !Number.isFinite(n)) throw new MemoryBudgetError(`memory must be a number of GiB such as 1.5, got "${raw}"`);
  if (n < MIN_MEMORY_GIB || n > MAX_MEMORY_GIB) throw new MemoryBudgetError(`memory must be between ${MIN_MEMORY_GIB} and ${MAX_MEMORY_GIB} GiB, got ${n}`);
  return Math.round(n * GiB);
}

/** bytes → "1.5" (GiB, for an input's value); at most 3 decimals. */
export function gibText(bytes: number): string {
  return String(Math.round((bytes / GiB) * 1000) / 1000);
}

export interface DefaultMemory {
  bytes: number;
  deviceMemoryGiB: number;     // what navigator.deviceMemory reports (0 = not reported)
  why: string;                 // "half of the 8 GB this browser reports"
}

/** The budget this device offers when the user sets none, derived exactly as the room derives it. */
export async function defaultMemoryBudget(): Promise<DefaultMemory> {
  const caps = await measureCapabilities({ engine: 'reference', speed: 1 });
  return {
    bytes: caps.memoryBudgetBytes, deviceMemoryGiB: caps.deviceMemoryGiB,
    why: caps.deviceMemoryGiB > 0
      ? `half of the ${caps.deviceMemoryGiB} GB this browser reports`
      : 'this browser does not report its memory',
  };
}
