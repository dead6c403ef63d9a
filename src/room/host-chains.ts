// How the host turns a deal into pipeline stages (host.ts): the host's own share, then chains of
// consecutive guests joined by direct hops, each one ChainEngine; and what each guest is told of its
// neighbours (its assign). Kept apart so host.ts stays about the room's life.
import type { LayerEngine, LayerRange } from '../model/engine-types.ts';
import { holdsLinearLayers } from '../model/types.ts';
import { ChainEngine, type ChainMember, type RemoteDevice } from './chain-engine.ts';
import type { DealEntry } from './deal.ts';
import { DeviceLeftError } from './errors.ts';
import type { HostDevice } from './host-device.ts';
import type { HostOptions } from './host-types.ts';
import type { Frame } from './protocol.ts';

/**
 * The deal's devices holding layers, in layer order, grouped into stages: the host alone, then chains of
 * consecutive guests. `cut` lists hops "a>b" that must go through the host (they could not be wired, or
 * their chain stalled); null = direct hops off, every guest its own stage.
 */
export function stagesOf(entries: readonly DealEntry[], hostId: string, cut: ReadonlySet<string> | null): DealEntry[][] {
  const holders = entries.filter((e) => e.range[1] > e.range[0]).sort((a, b) => a.range[0] - b.range[0]);
  const groups: DealEntry[][] = [];
  for (const e of holders) {
    const last = groups.at(-1)?.at(-1);
    const joined = last && cut && last.deviceId !== hostId && e.deviceId !== hostId && !cut.has(`${last.deviceId}>${e.deviceId}`);
    if (joined) groups.at(-1)!.push(e); else groups.push([e]);
  }
  return groups;
}

/** prev/next of every guest in a chain ('' = the host: the first gets its rows from it, the last returns them). */
export function routesOf(stages: readonly DealEntry[][], hostId: string): Map<string, { prev: string; next: string }> {
  const routes = new Map<string, { prev: string; next: string }>();
  for (const group of stages) {
    group.forEach((e, i) => {
      if (e.deviceId === hostId) return;
      routes.set(e.deviceId, { prev: group[i - 1]?.deviceId ?? '', next: group[i + 1]?.deviceId ?? '' });
    });
  }
  return routes;
}

/** The ChainEngine of one group of guests, with the host's deadlines (scaled by the chain's depth). */
export function buildChain(members: readonly HostDevice[], group: readonly DealEntry[], epoch: number, opts: HostOptions,
  onFault: (why: string, culprit: RemoteDevice | null) => void): ChainEngine {
  const parts: ChainMember[] = members.map((d, i) => ({
    device: { id: d.id, name: d.name }, range: group[i]!.range, recurrent: holdsLinearLayers(opts.config, group[i]!.range),
    send: (f) => (d.channel ? d.channel.send(f) : Promise.reject(new DeviceLeftError(d.name, d.id, 'gone'))),
  }));
  return new ChainEngine(parts, epoch, opts.config.hiddenSize, {
    timeoutMs: (count, depth) => ((opts.requestTimeoutMs ?? 30_000) + count * (opts.requestTimeoutPerTokenMs ?? 250)) * depth,
    onFault, ...(opts.maxForwardBytes !== undefined ? { maxForwardBytes: opts.maxForwardBytes } : {}),
  });
}

/**
 * The deal's stage engines in pipeline order: the host's own engine for its group, `chainOf` for each
 * group of guests. DeviceLeftError when a device of a group left during the deal.
 */
export function stageEngines(groups: readonly DealEntry[][], devices: ReadonlyMap<string, HostDevice>, hostId: string, hostEngine: LayerEngine,
  chainOf: (members: HostDevice[], group: DealEntry[]) => ChainEngine): LayerEngine[] {
  const stages: LayerEngine[] = [];
  for (const group of groups) {
    const members: HostDevice[] = [];
    for (const e of group) {
      const d = devices.get(e.deviceId);
      if (!d) throw new DeviceLeftError(e.deviceId, e.deviceId, 'left during the deal');
      members.push(d);
    }
    if (members[0]!.id === hostId) { stages.push(hostEngine); continue; }
    stages.push(chainOf(members, group));
  }
  return stages;
}

/** The `assign` a guest is sent for deal `epoch`: its layers, where to read the model, and its neighbours. */
export function assignFrame(opts: HostOptions, epoch: number, range: LayerRange, route: { prev: string; next: string } | undefined, ctx = opts.ctx, step?: number): Frame {
  const modelFile = opts.modelUrl === '' ? opts.source.modelFile : undefined;
  const { prev, next } = route ?? { prev: '', next: '' };
  return {
    kind: 'assign', epoch, model: opts.modelUrl, modelKey: opts.modelKey, range, ctx, ...(modelFile ? { modelFile } : {}), prev, next,
    ...(opts.kv === 'q8_0' ? { kv: 'q8_0' as const } : {}), ...(step !== undefined ? { step } : {}),
  };
}

/** The way a decode token's activations travel through the room, for the room panel. */
export interface TokenRoute {
  /** Device names in the order the activations visit them: the host, each chain's guests, back to the host. */
  stops: string[];
  /** Frames between devices per decode token: N + 1 for one chain of N guests, 2N when every guest answers the host. */
  hops: number;
}

/** The route through `chains` (each a list of guest names in pipeline order) from and back to `hostName`. */
export function tokenRoute(hostName: string, chains: readonly (readonly string[])[]): TokenRoute {
  const stops = [hostName];
  for (const chain of chains) if (chain.length > 0) stops.push(...chain, hostName);
  return { stops, hops: stops.length - 1 };
}
