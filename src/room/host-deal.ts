// What the host deals (host.ts): the cost model its options give, and the entries for the devices here (its
// manual deal while every device that deal names is here, else an automatic one at the largest context
// the room holds, up to the one wanted). Kept apart so host.ts holds the steps of a deal, not its arithmetic.
import type { EngineTable } from '../engines/contract.ts';
import { engineBudgetBytes } from './engine-choice.ts';
import { LOAD_PEAK_BYTES, type ScratchOptions } from './device-bytes.ts';
import { dealtStep } from './device-step.ts';
import { dealLargestContext, type ContextDeal } from './context-choice.ts';
import { dealCost, dealCostFromPlan, shareTotal, snapshotsForCkpt, validateDeal, type DealCost, type DealDevice, type DealEntry } from './deal.ts';
import type { HostDevice } from './host-device.ts';
import type { HostOptions } from './host-types.ts';

/** What the deal's cost depends on: the model (its exact tensor bytes when a weight plan is at hand), checkpoints, the KV type. */
export type DealModel = Pick<HostOptions, 'config' | 'format' | 'weightBytes' | 'ckpt' | 'kv'>;

/**
 * Each layer's weight + KV (+ snapshot) bytes at `ctx` and what each device and the host hold besides: from
 * the weight plan when there is one, else the config.
 */
export function roomDealCost(m: DealModel, ctx: number, engines?: EngineTable): DealCost {
  const { config } = m;
  const snapshots = snapshotsForCkpt(m.ckpt ?? 4);
  const kv = m.kv ?? 'f16';
  const cost = m.weightBytes
    ? dealCostFromPlan(config, m.weightBytes.layerBytes, m.weightBytes.fixedBytes, ctx, snapshots, kv)
    : dealCost(config, m.format, ctx, snapshots, kv);
  return engines ? withEngineScratch(cost, config, engines) : cost;
}

/** The cost with each device's scratch asked of its engine's row at its step (an engine the table lacks: the cost's own figure). */
function withEngineScratch(cost: DealCost, config: DealModel['config'], engines: EngineTable): DealCost {
  const scratch = cost.scratch;
  if (!scratch) return cost;
  const byEngine = new Map<string, number>();
  return {
    ...cost,
    deviceFixedFor: (engine, step) => {
      const key = `${engine}@${step ?? ''}`;
      let bytes = byEngine.get(key);
      if (bytes === undefined) {
        const row = engines[engine];
        bytes = row ? row.scratchBytes(config, { ...scratch, ...(step !== undefined ? { maxBatch: step } : {}) }) + LOAD_PEAK_BYTES : cost.deviceFixedBytes ?? 0;
        byEngine.set(key, bytes);
      }
      return bytes;
    },
  };
}

/** The host's cost at `ctx` (default: the context wanted), each device's scratch its engine's. */
export function hostDealCost(opts: HostOptions, ctx = opts.ctx): DealCost {
  return roomDealCost(opts, ctx, opts.engines);
}

/**
 * The devices as the deal sees them: the host's memory less `hostReserved` bytes it keeps outside the deal
 * (a draft model); each at most what its engine can use (its row's cap: a WASM device a wasm32 memory,
 * 4 GiB), whatever its hello offered.
 */
export function dealDevices(devices: ReadonlyMap<string, HostDevice>, engines: EngineTable, hostId: string, hostReserved = 0, model?: DealModel & Pick<HostOptions, 'ctx'>): DealDevice[] {
  return [...devices.values()].map((d) => {
    const offered = engineBudgetBytes(engines, d.caps.engine, d.caps.memoryBudgetBytes);
    const memoryBudgetBytes = d.id === hostId ? Math.max(0, offered - hostReserved) : offered;
    const step = model ? dealtStep(model.config, stepScratch(model), engines, d.caps, memoryBudgetBytes) : undefined;
    return { id: d.id, name: d.name, speed: d.caps.speed, memoryBudgetBytes, engine: d.caps.engine, ...(step !== undefined ? { step } : {}) };
  });
}

/**
 * What a step's scratch is weighed with (device-step.ts): the context wanted and the KV type. What a step
 * adds does not depend on the context; a split gate|up's [T, 2I] is left out of the weighing (the deal
 * itself counts it).
 */
function stepScratch(m: Pick<HostOptions, 'ctx' | 'kv'>): ScratchOptions {
  return { ctx: m.ctx, ...(m.kv ? { kv: m.kv } : {}) };
}

/** Each device's step as the deal counts it (dealDevices), by device id: what `assign` tells it. */
export function deviceSteps(devices: ReadonlyMap<string, HostDevice>, opts: HostOptions, hostId: string, hostReserved = 0): Map<string, number | undefined> {
  return new Map(dealDevices(devices, opts.engines, hostId, hostReserved, opts).map((d) => [d.id, d.step]));
}

/**
 * The deal for `devices` (join order, the host first): `manual`, validated, at the context wanted; or one
 * dealt by memory and speed at the largest context the room holds (opts.ctxExact: the one wanted or a
 * DealError naming the context it holds).
 */
export function dealRoom(devices: ReadonlyMap<string, HostDevice>, manual: DealEntry[] | null, opts: HostOptions, hostId: string, hostReserved = 0): ContextDeal {
  const ids = [...devices.keys()];
  // A manual deal applies while every device it names is here (a reloading guest comes back to it).
  const applies = manual?.every((e) => devices.has(e.deviceId)) ? manual : null;
  if (applies) {
    const entries = validateDeal(applies, ids, opts.config.numLayers, { firstLayerOn: hostId });
    return { ctx: opts.ctx, want: opts.ctx, entries, cost: hostDealCost(opts), oneMoreDeviceHolds: false };
  }
  return dealLargestContext(dealDevices(devices, opts.engines, hostId, hostReserved, opts), (ctx) => roomDealCost(opts, ctx, opts.engines), opts.ctx, { exact: opts.ctxExact ?? false });
}

/** The entries of dealRoom. */
export function dealEntries(devices: ReadonlyMap<string, HostDevice>, manual: DealEntry[] | null, opts: HostOptions, hostId: string, hostReserved = 0): DealEntry[] {
  return dealRoom(devices, manual, opts, hostId, hostReserved).entries;
}

/** The same devices with the same layer ranges, in the same order. */
export function sameDeal(a: readonly DealEntry[], b: readonly DealEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.deviceId === b[i]!.deviceId && e.range[0] === b[i]!.range[0] && e.range[1] === b[i]!.range[1]);
}

/**
 * The deal in effect before the host's page reloaded (HostOptions.resumeDeal), dealt again when exactly the
 * devices it names are here: guests that come back to the same layers at the same context keep their loaded
 * engines (guest.ts `assign`), so nothing is loaded twice. Null when it does not apply: other devices, a
 * context the room does not want, a deal that no longer validates, or a share past what its device offers now.
 */
export function resumedDeal(devices: ReadonlyMap<string, HostDevice>, resume: HostOptions['resumeDeal'] | null, opts: HostOptions, hostId: string, hostReserved = 0): ContextDeal | null {
  if (!resume) return null;
  const ids = [...devices.keys()];
  if (ids.length !== resume.entries.length || !resume.entries.every((e) => devices.has(e.deviceId))) return null;
  if (resume.ctx > opts.ctx || (opts.ctxExact && resume.ctx !== opts.ctx)) return null;
  let entries: DealEntry[];
  try { entries = validateDeal(resume.entries, ids, opts.config.numLayers, { firstLayerOn: hostId }); } catch { return null; }
  const cost = roomDealCost(opts, resume.ctx, opts.engines);
  const offers = new Map(dealDevices(devices, opts.engines, hostId, hostReserved, opts).map((d) => [d.id, d]));
  const fits = entries.every((e) => {
    const d = offers.get(e.deviceId)!;
    return shareTotal(cost, e.range, e.deviceId === hostId ? 0 : 1, d.engine, d.step) <= d.memoryBudgetBytes;
  });
  return fits ? { ctx: resume.ctx, want: opts.ctx, entries, cost, oneMoreDeviceHolds: false } : null;
}
