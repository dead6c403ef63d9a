// The context a room can hold: the deal is made at the largest context, up to the one wanted (the
// model's default, or ?ctx=), whose KV cache, RoPE table and the rest still fit every device's offer.
// The KV grows with the context, so "deals at ctx" is monotone and a bisection over whole steps finds it.
// A context asked for explicitly (?ctx=) is dealt as asked or refused, naming the context the room holds.
import { dealLayers, type DealCost, type DealDevice, type DealEntry } from './deal.ts';
import { DealError } from './errors.ts';

/** Chosen contexts are whole multiples of this many tokens (below the one wanted). */
export const CONTEXT_STEP = 1024;

export interface ContextDeal {
  ctx: number;                 // the context dealt
  want: number;                // the context asked for (the model's default or ?ctx=)
  entries: DealEntry[];
  cost: DealCost;
  /** When ctx < want: one more device offering as much as the largest guest (or the host, alone) would hold `want`. */
  oneMoreDeviceHolds: boolean;
}

/** Whether the devices hold the model at this cost: the deal, or null. A DealError only says "no". */
function tryDeal(devices: DealDevice[], cost: DealCost): DealEntry[] | null {
  try { return dealLayers(devices, cost); } catch (e) { if (e instanceof DealError) return null; throw e; }
}

/** The largest multiple of CONTEXT_STEP below `want` at which the devices hold the model (0: none). */
export function largestContext(devices: DealDevice[], costAt: (ctx: number) => DealCost, want: number): number {
  let lo = 0, hi = Math.ceil(want / CONTEXT_STEP) - 1;     // steps: lo holds (0 = none known), hi + 1 is ≥ want
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (tryDeal(devices, costAt(mid * CONTEXT_STEP))) lo = mid; else hi = mid - 1;
  }
  return lo * CONTEXT_STEP;
}

/**
 * Deal at `want` if the room holds it, else (unless `exact`) at the largest context it holds. A room that
 * holds no context at all is the DealError of the smallest; an `exact` context it cannot hold is refused
 * with the context it can.
 */
export function dealLargestContext(devices: DealDevice[], costAt: (ctx: number) => DealCost, want: number, opts: { exact?: boolean } = {}): ContextDeal {
  const full = costAt(want);
  const entries = tryDeal(devices, full);
  if (entries) return { ctx: want, want, entries, cost: full, oneMoreDeviceHolds: false };
  const ctx = largestContext(devices, costAt, want);
  if (ctx === 0) dealLayers(devices, costAt(Math.min(want, CONTEXT_STEP)));   // throws, saying what does not fit
  if (opts.exact) {
    throw new DealError(`the room's memory holds a context of ${fmt(ctx)} tokens, not the ${fmt(want)} asked for (?ctx=): ask for ${fmt(ctx)} or less, or add a device`);
  }
  const cost = costAt(ctx);
  const guests = devices.slice(1).map((d) => d.memoryBudgetBytes);
  const offer = guests.length > 0 ? Math.max(...guests) : devices[0]!.memoryBudgetBytes;
  const more: DealDevice = { id: '+1', name: 'one more device', memoryBudgetBytes: offer, speed: devices[devices.length - 1]!.speed };
  return { ctx, want, entries: dealLayers(devices, cost), cost, oneMoreDeviceHolds: tryDeal([...devices, more], full) !== null };
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/** The context meter's words for a deal: "context 24,576 — what this room holds; add a device for 32,768". */
export function contextNote(c: Pick<ContextDeal, 'ctx' | 'want' | 'oneMoreDeviceHolds'>): string {
  if (c.ctx >= c.want) return `context ${fmt(c.ctx)}`;
  return `context ${fmt(c.ctx)} — what this room holds; ${c.oneMoreDeviceHolds ? 'add a device' : 'add devices or memory'} for ${fmt(c.want)}`;
}
