// "Will it fit?" before anything is downloaded: the deal a room would make for devices offering these
// budgets (the first is the host, all equally fast), from the model's headers alone. The room's own deal
// code (host-deal.ts roomDealCost, context-choice.ts dealLargestContext), not a copy; `npm run plan`
// prints it (bin/plan.ts).
import type { LayerRange } from '../model/engine-types.ts';
import { readModelConfig } from '../model/config.ts';
import { planWeights } from '../model/load-weights.ts';
import type { ModelSource } from '../model/types.ts';
import { contextNote, dealLargestContext } from './context-choice.ts';
import { shareTotal } from './deal.ts';
import type { KvType } from './device-bytes.ts';
import { DealError } from './errors.ts';
import { roomDealCost, type DealModel } from './host-deal.ts';

export interface PlannedDevice {
  name: string;
  range: LayerRange;           // [start, end): no layers when start = end
  bytes: number;               // all the device allocates for its share (deal.ts shareTotal)
  budgetBytes: number;
}

export interface RoomPlan {
  fits: boolean;
  ctx: number;                 // the context dealt (0 when nothing fits)
  want: number;
  kv: KvType;
  devices: PlannedDevice[];
  /** The context meter's words for it, or why nothing fits (the DealError's message). */
  note: string;
}

export interface PlanOptions {
  /** The context wanted (the model's default or ?ctx=). */
  want: number;
  /** Refuse rather than deal a smaller context (?ctx= given). */
  exact?: boolean;
  kv?: KvType;
  ckpt?: number;
}

/** The model's config and exact tensor bytes, from its headers (no weight bytes read). */
export async function dealModelOf(source: ModelSource): Promise<DealModel & { metadataBytes: number }> {
  const { config, file } = await readModelConfig(source);
  const plan = await planWeights(source, { layers: [0, config.numLayers], embedding: true, head: true });
  return {
    config, format: source.modelFile ? 'gguf' : file === 'mlc-chat-config.json' ? 'mlc' : 'safetensors',
    weightBytes: { layerBytes: plan.layerBytes, fixedBytes: plan.fixedBytes }, metadataBytes: plan.metadataBytes,
  };
}

/** The deal for devices offering `budgets` bytes (budgets[0]: the host), as the room makes it. */
export function planRoom(model: DealModel, budgets: readonly number[], opts: PlanOptions): RoomPlan {
  const kv = opts.kv ?? model.kv ?? 'f16';
  const m: DealModel = { ...model, kv, ...(opts.ckpt !== undefined ? { ckpt: opts.ckpt } : {}) };
  const devices = budgets.map((b, i) => ({ id: i === 0 ? 'host' : `guest${i}`, name: i === 0 ? 'host' : `guest ${i}`, memoryBudgetBytes: b, speed: 1 }));
  try {
    const d = dealLargestContext(devices, (ctx) => roomDealCost(m, ctx), opts.want, { exact: opts.exact ?? false });
    return {
      fits: true, ctx: d.ctx, want: d.want, kv, note: contextNote(d),
      devices: d.entries.map((e, i) => ({ name: devices[i]!.name, range: e.range, bytes: shareTotal(d.cost, e.range, i), budgetBytes: budgets[i]! })),
    };
  } catch (e) {
    if (!(e instanceof DealError)) throw e;
    return { fits: false, ctx: 0, want: opts.want, kv, note: e.message, devices: devices.map((d, i) => ({ name: d.name, range: [0, 0], bytes: 0, budgetBytes: budgets[i]! })) };
  }
}
