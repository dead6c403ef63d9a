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

/** The deal for `devices` (join order, the host first): `manual`, validated, or one dealt by memory and speed. */
export function dealEntries(devices: ReadonlyMap<string, HostDevice>, manual: DealEntry[] | null, opts: HostOptions, hostId: string): DealEntry[] {
  const ids = [...devices.keys()];
  // A manual deal applies while every device it names is here (a reloading guest comes back to it).
  const applies = manual?.every((e) => devices.has(e.deviceId)) ? manual : null;
  return applies
    ? validateDeal(applies, ids, opts.config.numLayers, { firstLayerOn: hostId })
    : dealLayers([...devices.values()].map((d) => ({ id: d.id, name: d.name, memoryBudgetBytes: d.caps.memoryBudgetBytes, speed: d.caps.speed })),
      hostDealCost(opts));
}
