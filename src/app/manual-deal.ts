// The expert's manual deal: a count of layers per device, in pipeline order (host first, then guests in
// join order), turned into contiguous ranges and checked by the room's own validateDeal. Errors name
// devices by their names, not their ids.
import { shareTotal, validateDeal, type DealCost, type DealEntry } from '../room/deal.ts';
import { DealError } from '../room/errors.ts';

export interface DealDeviceRef { id: string; name: string; memoryBudgetBytes?: number }

/**
 * What each entry's range costs the device that holds it: the sum of its layers' weight + KV bytes
 * (an MoE or hybrid layer costs what it costs, not an average), the engine's scratch on a device holding
 * layers, plus the embedding and head on the host (entries[0]). Layers past the model count nothing.
 */
export function shareBytes(entries: readonly DealEntry[], cost: DealCost): number[] {
  return entries.map((e, i) => shareTotal(cost, e.range, i));
}

/** Layer counts (one per device, same order) → contiguous ranges from layer 0 on. Not yet validated. */
export function rangesFromCounts(devices: readonly DealDeviceRef[], counts: readonly number[]): DealEntry[] {
  let at = 0;
  return devices.map((d, i) => {
    const n = counts[i] ?? 0;
    const entry: DealEntry = { deviceId: d.id, range: [at, at + n] };
    at += Number.isFinite(n) ? Math.max(0, n) : 0;
    return entry;
  });
}

/** The current deal as counts per device (0 for a device it leaves out). */
export function countsFromDeal(devices: readonly DealDeviceRef[], deal: readonly DealEntry[]): number[] {
  return devices.map((d) => {
    const e = deal.find((x) => x.deviceId === d.id);
    return e ? Math.max(0, e.range[1] - e.range[0]) : 0;
  });
}

/** Ranges for the counts, validated with validateDeal; a DealError's message names devices by name. */
export function manualDeal(devices: readonly DealDeviceRef[], counts: readonly number[], numLayers: number): DealEntry[] {
  const bad = counts.findIndex((n) => !Number.isInteger(n) || n < 0);
  const entries = rangesFromCounts(devices, counts.map((n) => (Number.isInteger(n) && n >= 0 ? n : 0)));
  try {
    if (bad >= 0) throw new DealError(`device "${devices[bad]!.id}": the layer count must be a whole number ≥ 0`);
    validateDeal(entries, devices.map((d) => d.id), numLayers, { firstLayerOn: devices[0]?.id });
  } catch (e) {
    const err = e as Error;
    let message = err.message;
    for (const d of devices) message = message.split(`"${d.id}"`).join(`"${d.name}"`);
    const sum = counts.reduce((a, n) => a + (Number.isFinite(n) ? n : 0), 0);
    if (bad < 0 && sum !== numLayers) message = `the counts add up to ${sum} of the model's ${numLayers} layers (${message})`;
    err.message = message;
    throw err;
  }
  return entries;
}
