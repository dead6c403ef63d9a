// Why a guest that joined holds no layers, and the one click that splits anyway. The automatic deal gives
// shares in proportion to memory × measured speed, so a slow guest beside a host that holds the whole
// model rounds to nothing: right for speed (every token would cross the link and wait on the slower
// device), but silent. This says it on both sides, with the factor a split would run at, estimated from
// what the room measured (each device's speed, the guest's round trip), and deals by memory alone when
// asked (the deal editor stays the expert path).
import { dealLayers, type DealCost, type DealEntry } from '../room/deal.ts';
import type { DeviceInfo } from '../room/host.ts';
import { isLinearLayer, isMoeLayer, type ModelConfig } from '../model/types.ts';

/** Guests in the room, loaded and holding no layers of this deal. */
export function standingBy(devices: readonly DeviceInfo[], deal: readonly DealEntry[]): DeviceInfo[] {
  return devices.filter((d) => !d.isHost && d.status === 'ready'
    && deal.some((e) => e.deviceId === d.id && e.range[1] <= e.range[0]));
}

/**
 * Multiply-adds per decoded token of layer i (weights it reads: an MoE layer only its active experts), for
 * the time estimate: 2 FLOPs each. Shapes from the config, as src/room/deal.ts counts bytes.
 */
export function layerFlops(config: ModelConfig, i: number): number {
  const { hiddenSize: H, headDim: D, numHeads, numKvHeads, intermediateSize: I } = config;
  const h = config.hybrid;
  let mixer: number;
  if (h && isLinearLayer(config, i)) {
    const Kd = h.linearNumKeyHeads * h.linearKeyHeadDim, Vd = h.linearNumValueHeads * h.linearValueHeadDim;
    mixer = H * (2 * Kd + 2 * Vd + 2 * h.linearNumValueHeads) + Vd * H;
  } else {
    mixer = H * ((h ? 2 : 1) * numHeads + 2 * numKvHeads) * D + numHeads * D * H;
  }
  const m = config.moe;
  const mlp = m && isMoeLayer(config, i)
    ? m.numExpertsPerTok * 3 * H * m.moeIntermediateSize + m.numExperts * H + (m.sharedExpertIntermediateSize ? 3 * H * m.sharedExpertIntermediateSize : 0)
    : 3 * H * I;
  return 2 * (mixer + mlp);
}

/** Seconds per decoded token of `deal`, from each device's measured speed (GFLOP/s) and each guest's round trip. */
export function tokenSeconds(config: ModelConfig, deal: readonly DealEntry[], devices: readonly DeviceInfo[]): number {
  const byId = new Map(devices.map((d) => [d.id, d]));
  const host = devices.find((d) => d.isHost);
  const gflops = (d: DeviceInfo | undefined) => Math.max(1e-6, d?.caps.speed ?? 1) * 1e9;
  // The head (logits over the vocabulary) and the embedding run on the host either way.
  let seconds = (2 * config.vocabSize * config.hiddenSize) / gflops(host);
  for (const e of deal) {
    const d = byId.get(e.deviceId);
    let flops = 0;
    for (let i = e.range[0]; i < e.range[1]; i++) flops += layerFlops(config, i);
    seconds += flops / gflops(d);
    // A guest alone in its stage: the hidden state goes there and back once per token.
    if (d && !d.isHost && e.range[1] > e.range[0]) seconds += Math.max(0, d.rttMs) / 1000;
  }
  return seconds;
}

/**
 * The deal "Split anyway" applies: layers in proportion to memory alone (every device counted as fast
 * as the others), so a guest standing by gets its share; budgets and the host's layer 0 as always.
 */
export function splitByMemory(devices: readonly DeviceInfo[], cost: DealCost): DealEntry[] {
  const present = devices.filter((d) => d.status !== 'left');
  const host = present.filter((d) => d.isHost);
  const ordered = [...host, ...present.filter((d) => !d.isHost)];
  return dealLayers(ordered.map((d) => ({ id: d.id, name: d.name, memoryBudgetBytes: d.caps.memoryBudgetBytes, speed: 1 })), cost);
}

export interface StandByNote {
  /** The guests standing by, by name. */
  names: string[];
  /** How fast the room would decode split by memory, over how fast it does now (<1: slower). */
  factor: number;
  /** The deal "Split anyway" would apply (null: memory alone still gives them nothing). */
  split: DealEntry[] | null;
}

/** What the host's room panel says about guests standing by, or null when every guest holds layers. */
export function standByNote(config: ModelConfig | undefined, cost: DealCost | undefined, devices: readonly DeviceInfo[], deal: readonly DealEntry[]): StandByNote | null {
  const idle = standingBy(devices, deal);
  if (!config || !cost || idle.length === 0) return null;
  let split: DealEntry[] | null;
  try {
    split = splitByMemory(devices, cost);
  } catch {
    split = null;   // memory alone cannot deal it (cannot happen while the current deal holds, but never throw in a render)
  }
  if (split && !idle.some((d) => split!.some((e) => e.deviceId === d.id && e.range[1] > e.range[0]))) split = null;
  const factor = split ? tokenSeconds(config, deal, devices) / tokenSeconds(config, split, devices) : 1;
  return { names: idle.map((d) => d.name), factor, split };
}

/** "~0.8×" (two significant figures below 1, one decimal above). */
export function factorText(factor: number): string {
  return `~${factor < 1 ? factor.toPrecision(2).replace(/0+$/, '').replace(/\.$/, '') : factor.toFixed(1)}×`;
}
