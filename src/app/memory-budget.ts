// How much memory this device offers the room: the user's choice in GiB (start screen, join form, guest
// screen, ?mem=), kept in this browser (localStorage) so the device offers it again, or the suggestion the
// room derives from what the browser reveals (src/room/capabilities.ts suggestedOffer: deviceMemory and
// phone / tablet / desktop). The dealer gives a device no more layers than its budget holds.
import { platformOf, suggestedOffer } from '../room/capabilities.ts';

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
  why: string;                 // "half of the 8 GB this browser reports", "your own figure, kept in this browser"
  /** The figure is the user's own (kept in this browser), not the suggestion. */
  own?: boolean;
}

const OFFER_KEY = 'pooled.memory-offer';

/** The user's own figure for this device (bytes), kept in this browser; undefined when none (or unreadable). */
export function savedMemoryOffer(storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage): number | undefined {
  try { return memoryBudgetFromGiB(storage?.getItem(OFFER_KEY) ?? ''); } catch { return undefined; }
}

/** Keep (or, with undefined, forget) the user's own figure for this device. */
export function saveMemoryOffer(bytes: number | undefined, storage: Pick<Storage, 'setItem' | 'removeItem'> | undefined = globalThis.localStorage): void {
  if (!storage) return;
  if (bytes === undefined) storage.removeItem(OFFER_KEY); else storage.setItem(OFFER_KEY, gibText(bytes));
}

/** What this device offers when the user types nothing now: their own figure from before, else the suggestion. */
export async function defaultMemoryBudget(): Promise<DefaultMemory> {
  const deviceMemoryGiB = (globalThis.navigator as { deviceMemory?: number } | undefined)?.deviceMemory ?? 0;
  const own = savedMemoryOffer();
  if (own !== undefined) return { bytes: own, deviceMemoryGiB, why: 'your own figure, kept in this browser', own: true };
  const s = suggestedOffer({ deviceMemoryGiB, platform: platformOf(globalThis.navigator) });
  return { bytes: s.bytes, deviceMemoryGiB, why: s.why };
}

/** The budget a session offers: a figure given now is kept for next time; none given: the one kept, else the room's suggestion. */
export function offerOf(given: number | undefined): { memoryBudgetBytes?: number } {
  if (given) { saveMemoryOffer(given); return { memoryBudgetBytes: given }; }
  const own = savedMemoryOffer();
  return own !== undefined ? { memoryBudgetBytes: own } : {};
}

/** navigator.deviceMemory's largest answer: browsers round down and stop at 8, so 8 means "8 GB or more". */
const DEVICE_MEMORY_CAP_GIB = 8;

/**
 * The one wording of a device's memory offer, on its own page and on the host's card alike: "6 GB offered of
 * 8 GB", and past what the browser can report "16 GB offered (the browser reports 8 GB or more)", never a
 * figure above the one it is "of".
 */
export function memoryOfferText(offeredBytes: number, deviceMemoryGiB: number, format: (bytes: number) => string): string {
  const offered = `${format(offeredBytes)} offered`;
  if (!(deviceMemoryGiB > 0)) return offered;
  if (offeredBytes <= deviceMemoryGiB * 2 ** 30) return `${offered} of ${deviceMemoryGiB} GB`;
  return `${offered} (the browser reports ${deviceMemoryGiB} GB${deviceMemoryGiB >= DEVICE_MEMORY_CAP_GIB ? ' or more' : ''})`;
}

