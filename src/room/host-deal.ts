// What the host deals (host.ts): the cost model its options give, and the entries for the devices here (its
// manual deal while every device that deal names is here, else an automatic one). Kept apart so host.ts
// holds the steps of a deal, not its arithmetic.
import { dealCost, dealCostFromPlan, dealLayers, snapshotsForCkpt, validateDeal, type DealCost, type DealEntry } from './deal.ts';
import type { HostDevice } from './host-device.ts';
import type { HostOptions } from './host-types.ts';

/** Each layer's weight + KV (+ snapshot) bytes and the fixed bytes: from the weight plan when there is one, else the config. */
export function hostDealCost(opts: HostOptions): DealCost {
  const { config } = opts;
  const snapshots = snapshotsForCkpt(opts.ckpt ?? 4);
  return opts.weightBytes
    ? dealCostFromPlan(config, opts.weightBytes.layerBytes, opts.weightBytes.fixedBytes, opts.ctx, snapshots)
    : dealCost(config, opts.format, opts.ctx, snapshots);
}

/**
 * The deal for `devices` (join order, the host first): `manual`, validated, or one dealt by memory and speed,
 * the host's memory less `hostReserved` bytes it keeps outside the deal (a draft model).
 */
export function dealEntries(devices: ReadonlyMap<string, HostDevice>, manual: DealEntry[] | null, opts: HostOptions, hostId: string, hostReserved = 0): DealEntry[] {
  const ids = [...devices.keys()];
  // A manual deal applies while every device it names is here (a reloading guest comes back to it).
  const applies = manual?.every((e) => devices.has(e.deviceId)) ? manual : null;
  return applies
    ? validateDeal(applies, ids, opts.config.numLayers, { firstLayerOn: hostId })
    : dealLayers([...devices.values()].map((d) => ({
      id: d.id, name: d.name, speed: d.caps.speed,
      memoryBudgetBytes: d.id === hostId ? Math.max(0, d.caps.memoryBudgetBytes - hostReserved) : d.caps.memoryBudgetBytes,
    })),
      hostDealCost(opts));
}

/** The same devices with the same layer ranges, in the same order. */
export function sameDeal(a: readonly DealEntry[], b: readonly DealEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.deviceId === b[i]!.deviceId && e.range[0] === b[i]!.range[0] && e.range[1] === b[i]!.range[1]);
}
