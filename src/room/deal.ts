// Dealing layers: each device gets one contiguous range [start, end); ranges follow the pipeline order
// (host first, then guests in join order) and cover [0, L) exactly. Dealing counts bytes: a layer
// weighs its own tensors (from the weight plan when there is one: a Q4_K_M file's Q6_K layers and an MoE
// layer's experts weigh what they weigh) plus its cache: the KV at ctx for an attention layer, the
// recurrent state kept live and once per checkpoint snapshot for a Gated DeltaNet layer (Qwen3.5, which
// has no KV); every device holding layers also holds the engine's scratch (RoPE table at ctx,
// activations, MoE buffers, read-backs) and the load's peak; the host also holds the embedding and head
// (device-bytes.ts says what each is). Shares are in proportion to capacity × speed, capped at capacity.
//   - all layers the same size: capacity in layers, largest-remainder rounding (exact even splits);
//   - layers of different sizes: cuts nearest each device's cumulative byte share, within what every
//     device's budget allows and what the devices after it can still hold.
// A manual deal is validated instead.
//
// Guests' budgets and speeds are claims, and a guest may lie to be dealt everything, so:
//  * the host always keeps layer 0 (next to the embedding): the first stage's input is the embedding
//    rows of the tokens, which would give the exact prompt and every token away (see README, "What a
//    guest can learn");
//  * claims are clamped to sane maxima (budget ≤ 1 TiB, speed ≤ 16× the host's own measured speed);
//  * one guest's share is at most 3/4 of the model, unless the other devices cannot hold the rest.
import type { EngineKind } from '../engines/contract.ts';
import type { ScratchOptions } from '../model/engine-scratch.ts';
import type { LayerRange } from '../model/engine-types.ts';
import type { ModelConfig } from '../model/types.ts';
import { SPLIT_BINDING_BYTES } from './config-cost.ts';
import { engineScratchBytes, headScratchBytes, layerCacheBytes, LOAD_PEAK_BYTES, type KvType } from './device-bytes.ts';
import { DealError } from './errors.ts';

export { dealCost } from './config-cost.ts';
export { kvBytesPerLayer, layerCacheBytes, type KvType } from './device-bytes.ts';

export interface DealDevice {
  id: string;
  name: string;
  memoryBudgetBytes: number;
  speed: number;               // any unit, only ratios matter
  /** Its engine's kind: its scratch is what that engine's row says (DealCost.deviceFixedFor). */
  engine?: EngineKind;
  /** Its prefill step (device-step.ts dealtStep): its scratch is counted at it; absent: its engine's default. */
  step?: number;
}

export interface DealCost {
  numLayers: number;           // L
  bytesPerLayer: number;       // weights + KV cache at ctx of the largest layer (all of them when uniform)
  layerBytes?: number[];       // [L] weights + KV cache at ctx of each layer, when layers differ
  hostFixedBytes: number;      // embedding, final norm, head and the head's buffers (held by the host, devices[0])
  /** What every device holding layers allocates besides them: RoPE at ctx, activations, MoE buffers, read-backs, the load's peak (device-bytes.ts). */
  deviceFixedBytes?: number;
  /** What the scratch is sized for (context, KV type, gate|up split): an engine row's scratchBytes takes it. */
  scratch?: ScratchOptions;
  /** A device of this engine's fixed bytes at this step (its row's scratch + the load's peak), where the room knows its engines; else deviceFixedBytes. */
  deviceFixedFor?: (engine: EngineKind, step?: number) => number;
  ctx?: number;                // the context the cache bytes are for
  kv?: KvType;
}

/** What a device holding layers allocates besides them: its engine's scratch at its step when the cost knows engines, else every device's. */
export function deviceFixed(cost: DealCost, engine?: EngineKind, step?: number): number {
  return engine !== undefined && cost.deviceFixedFor ? cost.deviceFixedFor(engine, step) : cost.deviceFixedBytes ?? 0;
}

/** Bytes of each layer. */
export function layerCosts(cost: DealCost): number[] {
  return cost.layerBytes ?? new Array<number>(cost.numLayers).fill(cost.bytesPerLayer);
}

/** Snapshots a room keeps for `ckpt` answer checkpoints: those and the pinned one (none at ckpt 0). */
export function snapshotsForCkpt(ckpt: number): number {
  return ckpt > 0 ? ckpt + 1 : 0;
}

/**
 * A DealCost from the weight plan's exact tensor bytes (WeightPlan.layerBytes / fixedBytes), the cache at
 * ctx in `kv`, and what each device and the host allocate besides (device-bytes.ts).
 */
export function dealCostFromPlan(config: ModelConfig, layerWeightBytes: ReadonlyMap<number, number>, fixedBytes: number, ctx: number, snapshots = 0, kv: KvType = 'f16'): DealCost {
  const weights = Array.from({ length: config.numLayers }, (_, i) => layerWeightBytes.get(i) ?? 0);
  const layerBytes = weights.map((w, i) => w + layerCacheBytes(config, i, ctx, snapshots, kv));
  // A dense layer's gate|up is about 2·I·H of its weights' share: past the binding limit it is split (and needs [T, 2I]).
  const { hiddenSize: H, intermediateSize: I, numHeads, numKvHeads, headDim: D } = config;
  const params = H * (numHeads + numKvHeads) * D * 2 + 3 * H * I;
  const gateUpSplit = !config.moe && weights.some((w) => (w * 2 * I * H) / params > SPLIT_BINDING_BYTES);
  return {
    numLayers: config.numLayers, bytesPerLayer: Math.max(0, ...layerBytes), layerBytes,
    hostFixedBytes: fixedBytes + headScratchBytes(config),
    deviceFixedBytes: engineScratchBytes(config, { ctx, gateUpSplit, kv }) + LOAD_PEAK_BYTES,
    scratch: { ctx, gateUpSplit, kv }, ctx, kv,
  };
}

/**
 * What the device at `index` (0 = the host) of a deal holds in all for `range`: its layers, the scratch
 * every device holding layers allocates, and on the host the embedding and head.
 */
export function shareTotal(cost: DealCost, range: LayerRange, index: number, engine?: EngineKind, step?: number): number {
  const per = layerCosts(cost);
  let sum = index === 0 ? cost.hostFixedBytes : 0;
  for (let l = Math.max(0, range[0]); l < Math.min(range[1], per.length); l++) sum += per[l]!;
  return sum + (range[1] > range[0] || index === 0 ? deviceFixed(cost, engine, step) : 0);
}

export interface DealEntry { deviceId: string; range: LayerRange }

/** The most of a device's claims the deal believes (see the top of this file). */
export const DEAL_LIMITS = {
  budgetBytes: 2 ** 40,
  /** A guest counts as at most this many times as fast as the host measured itself. */
  speedRatio: 16,
  /** A guest's share of the layers (or of their bytes), when the others can hold the rest. */
  guestShare: 0.75,
} as const;

const finiteIn = (v: number, max: number) => (Number.isFinite(v) ? Math.min(max, Math.max(0, v)) : 0);

/** The devices as the deal believes them: budgets and speeds finite and clamped (devices[0] is the host). */
function believable(devices: readonly DealDevice[]): DealDevice[] {
  const hostSpeed = finiteIn(devices[0]!.speed, Number.MAX_VALUE);
  const maxSpeed = hostSpeed > 0 ? hostSpeed * DEAL_LIMITS.speedRatio : Number.MAX_VALUE;
  return devices.map((d, i) => ({
    ...d, memoryBudgetBytes: finiteIn(d.memoryBudgetBytes, DEAL_LIMITS.budgetBytes), speed: i === 0 ? hostSpeed : finiteIn(d.speed, maxSpeed),
  }));
}

/** Each guest's capacity cut to guestShare of the whole, unless the others cannot hold the rest (host: untouched). */
function capGuests(capacity: readonly number[], whole: number): number[] {
  const total = capacity.reduce((a, b) => a + b, 0);
  return capacity.map((c, i) => (i === 0 ? c : Math.min(c, Math.max(Math.floor(whole * DEAL_LIMITS.guestShare), whole - (total - c)))));
}

/** devices[0] is the host. Returns one entry per device, in order; a device may get an empty range, the host never. */
export function dealLayers(claimed: DealDevice[], cost: DealCost): DealEntry[] {
  if (claimed.length === 0) throw new DealError('no devices to deal layers to');
  const devices = believable(claimed);
  const sizes = layerCosts(cost);
  if (sizes.length !== cost.numLayers) throw new DealError(`deal cost lists ${sizes.length} layers for a ${cost.numLayers}-layer model`);
  const entries = sizes.some((b) => b !== sizes[0])
    ? dealByBytes(devices, cost, sizes)
    : dealUniform(devices, { ...cost, bytesPerLayer: sizes[0] ?? cost.bytesPerLayer });
  keepLayerZero(entries);
  checkCovers(entries, cost.numLayers);
  return entries;
}

/** The host (entries[0]) keeps layer 0: when a deal left it none, it takes layer 0 from the device that had it. */
function keepLayerZero(entries: DealEntry[]): void {
  const [host] = entries;
  if (!host || host.range[1] > 0) return;
  const first = entries.find((e) => e.range[1] > e.range[0]);
  if (!first) return; // a model of no layers
  host.range = [0, 1];
  for (const e of entries.slice(1)) e.range = [Math.max(1, e.range[0]), Math.max(1, e.range[1])];
}

/** Every layer of [0, L) exactly once, ranges contiguous in order: anything else is a DealError (a bug, never a deal). */
export function checkCovers(entries: readonly DealEntry[], numLayers: number): void {
  let at = 0;
  for (const e of entries) {
    const [s, t] = e.range;
    if (!(Number.isInteger(s) && Number.isInteger(t) && s === at && t >= s)) {
      throw new DealError(`deal gives device "${e.deviceId}" [${s}, ${t}), which does not continue at layer ${at}`);
    }
    at = t;
  }
  if (at !== numLayers) throw new DealError(`deal covers layers [0, ${at}) of ${numLayers}`);
}

function dealUniform(devices: DealDevice[], cost: DealCost): DealEntry[] {
  const L = cost.numLayers;
  const capacity = devices.map((d, i) => {
    const free = d.memoryBudgetBytes - (i === 0 ? cost.hostFixedBytes : 0) - deviceFixed(cost, d.engine, d.step);
    const fits = Math.max(0, Math.min(L, Math.floor(free / Math.max(1, cost.bytesPerLayer))));
    return i === 0 ? Math.max(Math.min(1, L), fits) : fits; // the host keeps layer 0 even on a tight budget
  });
  const total = capacity.reduce((a, b) => a + b, 0);
  if (total < L) {
    throw new DealError(`the room's memory holds ${total} of ${L} layers (${devices.map((d, i) => `${d.name}: ${capacity[i]}`).join(', ')}): add a device or raise a memory budget`);
  }
  const anySpeed = devices.some((d) => d.speed > 0);
  const weight = devices.map((d, i) => capacity[i]! * (anySpeed ? Math.max(0, d.speed) : 1));
  const limit = capGuests(capacity, L);
  // Water-filling: share ∝ weight; a device whose share passes its capacity is fixed at capacity.
  const share = new Array<number>(devices.length).fill(0);
  const open = new Set(devices.map((_, i) => i).filter((i) => weight[i]! > 0));
  let left = L;
  for (;;) {
    const sum = [...open].reduce((a, i) => a + weight[i]!, 0);
    const over = [...open].filter((i) => (left * weight[i]!) / sum > limit[i]!);
    if (over.length === 0) { for (const i of open) share[i] = (left * weight[i]!) / sum; break; }
    for (const i of over) { share[i] = limit[i]!; left -= limit[i]!; open.delete(i); }
    if (open.size === 0) break;
  }
  const counts = share.map(Math.floor);
  let missing = L - counts.reduce((a, b) => a + b, 0);
  const byRemainder = share.map((s, i) => [s - Math.floor(s), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of byRemainder) {
    if (missing === 0) break;
    if (counts[i]! < limit[i]!) { counts[i]!++; missing--; }
  }
  for (let i = 0; missing > 0 && i < devices.length; i++) {
    const add = Math.min(missing, limit[i]! - counts[i]!);
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
export function validateDeal(manual: DealEntry[], deviceIds: string[], numLayers: number, opts: { firstLayerOn?: string } = {}): DealEntry[] {
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
  if (opts.firstLayerOn !== undefined && numLayers > 0 && ordered[0]!.deviceId !== opts.firstLayerOn) {
    throw new DealError(`the host keeps layer 0 (next to the embedding), but the deal gives it to device "${ordered[0]!.deviceId}": the first layer's input is the embedding of the prompt, which would give every token away`);
  }
  const empties = deviceIds.filter((id) => !manual.some((e) => e.deviceId === id && e.range[1] > e.range[0]));
  return [...ordered, ...empties.map((deviceId) => ({ deviceId, range: [numLayers, numLayers] as LayerRange }))];
}

/**
 * Bytes each device can give to layers (the host's embedding and head come out of its budget, but it
 * always has room for layer 0), each guest capped at guestShare of the model's bytes unless the others
 * cannot hold the rest.
 */
function freeBytes(devices: DealDevice[], cost: DealCost, sizes: readonly number[]): { free: number[]; limit: number[] } {
  const free = devices.map((d, i) => Math.max(0, d.memoryBudgetBytes - (i === 0 ? cost.hostFixedBytes : 0) - deviceFixed(cost, d.engine, d.step)));
  if (sizes.length > 0) free[0] = Math.max(free[0]!, sizes[0]!);
  return { free, limit: capGuests(free, sizes.reduce((a, b) => a + b, 0)) };
}

/** Layers of different sizes: contiguous cuts nearest the cumulative byte shares, budgets respected. */
function dealByBytes(devices: DealDevice[], cost: DealCost, sizes: number[]): DealEntry[] {
  const L = sizes.length;
  const prefix = [0];
  for (const b of sizes) prefix.push(prefix[prefix.length - 1]! + b);
  const bytes = (a: number, b: number) => prefix[b]! - prefix[a]!;
  // free: what each device could hold (its weight in the shares); limit: what it may be given (guests capped).
  const { free: room, limit: free } = freeBytes(devices, cost, sizes);
  // Can devices[from..] hold layers [start, L), each taking all that fits? (Greedy is optimal for
  // covering a line with contiguous pieces in a fixed order.)
  const covers = (start: number, from: number): boolean => {
    let at = start;
    for (let i = from; i < devices.length && at < L; i++) {
      let end = at;
      while (end < L && bytes(at, end + 1) <= free[i]!) end++;
      at = end;
    }
    return at >= L;
  };
  if (!covers(0, 0)) {
    const avg = prefix[L]! / Math.max(1, L);
    const holds = devices.map((d, i) => `${d.name}: ${(free[i]! / 2 ** 30).toFixed(2)} GiB free`);
    throw new DealError(`the room's memory does not hold the model's ${L} layers (${(prefix[L]! / 2 ** 30).toFixed(2)} GiB, ≈${(avg / 2 ** 20).toFixed(0)} MiB a layer; ${holds.join(', ')}): add a device or raise a memory budget`);
  }
  const anySpeed = devices.some((d) => d.speed > 0);
  const weight = devices.map((d, i) => Math.min(room[i]!, prefix[L]!) * (anySpeed ? Math.max(0, d.speed) : 1));
  // Byte shares ∝ weight, water-filled so no share passes its device's budget.
  const share = new Array<number>(devices.length).fill(0);
  const open = new Set(devices.map((_, i) => i).filter((i) => weight[i]! > 0));
  let left = prefix[L]!;
  for (;;) {
    const sum = [...open].reduce((a, i) => a + weight[i]!, 0);
    const over = [...open].filter((i) => (left * weight[i]!) / sum > free[i]!);
    if (over.length === 0) { for (const i of open) share[i] = (left * weight[i]!) / sum; break; }
    for (const i of over) { share[i] = free[i]!; left -= free[i]!; open.delete(i); }
    if (open.size === 0) break;
  }
  const out: DealEntry[] = [];
  let start = 0;
  let target = 0;
  devices.forEach((d, i) => {
    target += share[i]!;
    let hi = start;
    while (hi < L && bytes(start, hi + 1) <= free[i]!) hi++;
    let best = -1;
    for (let end = start; end <= hi; end++) {
      if (!covers(end, i + 1)) continue;
      if (best < 0 || Math.abs(prefix[end]! - target) < Math.abs(prefix[best]! - target)) best = end;
    }
    const end = i === devices.length - 1 ? L : best < 0 ? hi : best;
    out.push({ deviceId: d.id, range: [start, end] });
    start = end;
  });
  return out;
}
