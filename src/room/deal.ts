// Dealing layers: each device gets one contiguous range [start, end); ranges follow the pipeline order
// (host first, then guests in join order) and cover [0, L) exactly. Shares are in proportion to
// capacity × speed (capacity = how many layers fit the device's memory budget, after the host's
// embedding/head), capped at capacity, rounded by largest remainder. A manual deal is validated instead.
import type { LayerRange } from '../model/engine-types.ts';
import type { ModelConfig } from '../model/types.ts';
import { DealError } from './errors.ts';

export interface DealDevice {
  id: string;
  name: string;
  memoryBudgetBytes: number;
  speed: number;               // any unit, only ratios matter
}

export interface DealCost {
  numLayers: number;           // L
  bytesPerLayer: number;       // weights + KV cache at ctx for one layer
  hostFixedBytes: number;      // embedding, final norm, head (held by the host, devices[0])
}

export interface DealEntry { deviceId: string; range: LayerRange }

/** Weight and KV bytes of one layer, and of embedding + head, for a config and weight format. */
export function dealCost(config: ModelConfig, format: 'safetensors' | 'mlc', ctx: number): DealCost {
  const { hiddenSize: H, headDim: D, numHeads, numKvHeads, intermediateSize: I, vocabSize: V } = config;
  const matrixParams = H * (numHeads + 2 * numKvHeads) * D + numHeads * D * H + 3 * H * I;
  const bytesPerParam = format === 'mlc' ? 0.5 + 2 / 32 : 2; // q4f16_1: 4-bit + one f16 scale per 32
  const weights = matrixParams * bytesPerParam + (2 * H + 2 * D) * 2;
  const kv = ctx * 2 * numKvHeads * D * 2; // K and V, f16
  const embedding = V * H * bytesPerParam;
  const head = config.tieWordEmbeddings ? 0 : V * H * bytesPerParam;
  return { numLayers: config.numLayers, bytesPerLayer: Math.ceil(weights + kv), hostFixedBytes: Math.ceil(embedding + head + H * 2) };
}

/** devices[0] is the host. Returns one entry per device, in order; a device may get an empty range. */
export function dealLayers(devices: DealDevice[], cost: DealCost): DealEntry[] {
  const L = cost.numLayers;
  if (devices.length === 0) throw new DealError('no devices to deal layers to');
  const capacity = devices.map((d, i) => {
    const free = d.memoryBudgetBytes - (i === 0 ? cost.hostFixedBytes : 0);
    return Math.max(0, Math.min(L, Math.floor(free / Math.max(1, cost.bytesPerLayer))));
  });
  const total = capacity.reduce((a, b) => a + b, 0);
  if (total < L) {
    throw new DealError(`the room's memory holds ${total} of ${L} layers (${devices.map((d, i) => `${d.name}: ${capacity[i]}`).join(', ')}): add a device or raise a memory budget`);
  }
  const anySpeed = devices.some((d) => d.speed > 0);
  const weight = devices.map((d, i) => capacity[i]! * (anySpeed ? Math.max(0, d.speed) : 1));
  // Water-filling: share ∝ weight; a device whose share passes its capacity is fixed at capacity.
  const share = new Array<number>(devices.length).fill(0);
  const open = new Set(devices.map((_, i) => i).filter((i) => weight[i]! > 0));
  let left = L;
  for (;;) {
    const sum = [...open].reduce((a, i) => a + weight[i]!, 0);
    const over = [...open].filter((i) => (left * weight[i]!) / sum > capacity[i]!);
    if (over.length === 0) { for (const i of open) share[i] = (left * weight[i]!) / sum; break; }
    for (const i of over) { share[i] = capacity[i]!; left -= capacity[i]!; open.delete(i); }
    if (open.size === 0) break;
  }
  const counts = share.map(Math.floor);
  let missing = L - counts.reduce((a, b) => a + b, 0);
  const byRemainder = share.map((s, i) => [s - Math.floor(s), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of byRemainder) {
    if (missing === 0) break;
    if (counts[i]! < capacity[i]!) { counts[i]!++; missing--; }
  }
  for (let i = 0; missing > 0 && i < devices.length; i++) {
    const add = Math.min(missing, capacity[i]! - counts[i]!);
    counts[i]! += add; missing -= add;
  }
  let at = 0;
  return devices.map((d, i) => {
    const range: LayerRange = [at, at + counts[i]!];
    at += counts[i]!;
    return { deviceId: d.id, range };
  });
}

/**
 * Check a manual deal: every known device once, ranges contiguous in the given order, covering [0, L).
 * Missing devices get an empty range at the end. Returns the entries in pipeline order.
 */
export function validateDeal(manual: DealEntry[], deviceIds: string[], numLayers: number): DealEntry[] {
  const known = new Set(deviceIds);
  const seen = new Set<string>();
  for (const e of manual) {
    if (!known.has(e.deviceId)) throw new DealError(`deal names device "${e.deviceId}", which is not in the room`);
    if (seen.has(e.deviceId)) throw new DealError(`deal names device "${e.deviceId}" twice`);
    seen.add(e.deviceId);
    const [s, t] = e.range;
    if (!(Number.isInteger(s) && Number.isInteger(t) && s >= 0 && s <= t && t <= numLayers)) {
      throw new DealError(`device "${e.deviceId}": [${s}, ${t}) is not a layer range of a ${numLayers}-layer model`);
    }
  }
  const ordered = manual.filter((e) => e.range[1] > e.range[0]).sort((a, b) => a.range[0] - b.range[0]);
  let at = 0;
  for (const e of ordered) {
    if (e.range[0] !== at) throw new DealError(`deal leaves layers [${at}, ${e.range[0]}) to no device or overlaps at layer ${e.range[0]}`);
    at = e.range[1];
  }
  if (at !== numLayers) throw new DealError(`deal covers layers [0, ${at}) of ${numLayers}`);
  const empties = deviceIds.filter((id) => !manual.some((e) => e.deviceId === id && e.range[1] > e.range[0]));
  return [...ordered, ...empties.map((deviceId) => ({ deviceId, range: [numLayers, numLayers] as LayerRange }))];
}
