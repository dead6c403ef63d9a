// The host's options, events and results (host.ts), kept apart so host.ts stays about behaviour.
import type { ModelConfig, ModelSource, WeightFormat } from '../model/types.ts';
import type { DealEntry, KvType } from './deal.ts';
import type { EngineTable } from '../engines/contract.ts';
import type { ShareLoading } from './share-loader.ts';
import type { DeviceInfo } from './host-device.ts';
import type { DeviceCaps } from './protocol.ts';
import type { ByteStore } from './weight-cache.ts';

export interface HostOptions extends ShareLoading {
  roomId: string;
  /** The deal in effect before this host's page reloaded: dealt again first, once exactly its devices are back (host-deal.ts resumedDeal). */
  /** The deal before a reload, offered first while exactly its devices are back; `manual`: it stays the person's manual deal. */
  resumeDeal?: { entries: DealEntry[]; ctx: number; manual?: boolean };
  name?: string;                 // the host device's name ("This device")
  caps: DeviceCaps;
  config: ModelConfig;
  format: WeightFormat;
  /** The model's exact tensor bytes per layer and outside the layers (WeightPlan), so dealing counts bytes. */
  weightBytes?: { layerBytes: ReadonlyMap<number, number>; fixedBytes: number };
  source: ModelSource;           // where the host reads the model
  /** URL guests read from with Range requests; '' = the host has a local folder: serve it over the channel. */
  modelUrl: string;
  modelKey: string;              // cache key of this model (same bytes ⇒ same key)
  /** The context wanted: the deal holds the largest the room's memory allows, up to this one. */
  ctx: number;
  /** The context was asked for (?ctx=): deal it exactly or refuse, naming the one the room holds (default false). */
  ctxExact?: boolean;
  /** How the KV cache is stored (default f16): the deal's KV bytes follow. */
  kv?: KvType;
  /** The engines of this page (src/engines/table.ts, or a test's): each device's memory cap comes from its engine's row. */
  engines: EngineTable;
  store: ByteStore;
  heartbeatMs?: number;          // default 250
  lossTimeoutMs?: number;        // default 1250 (silence + one beat < 2 s)
  microChunk?: number;           // prefill micro-chunk for pipelining (default 16; 0 = off)
  prefillChunk?: number;         // Generator prefill chunk (default 512)
  /** The most hidden-state bytes one forward carries (chain-engine.ts MAX_FORWARD_BYTES, 16 MiB; tests make it small). */
  maxForwardBytes?: number;
  ckpt?: number;                 // answer checkpoints kept (default 4; 0 = none, the pinned one too)
  autoRedeal?: boolean;          // re-deal on join/leave (default true)
  /** Guests holding consecutive layers pass hidden states to each other (N + 1 hops, not 2N; default true). */
  directHops?: boolean;
  /** A loading guest whose progress does not move for this long is dropped (default 120 s). */
  loadStallMs?: number;
  /** A guest may take this long in all to load its share (default 30 min), whatever its share. */
  loadTimeoutMs?: number;
  /** A guest's load must finish within loadGraceMs + its share's bytes at this rate (load-deadline.ts: 60 s + 1 MiB/s). */
  loadMinBytesPerSecond?: number;
  loadGraceMs?: number;
  /** A connection refused more than `max` frames within `windowMs` is dropped (frame-budget.ts: 100 in 10 s). */
  refusedFrames?: { max: number; windowMs: number };
  /** A forward/checkpoint request unanswered after this + count × requestTimeoutPerTokenMs drops its guest (default 30 s, 250 ms). */
  requestTimeoutMs?: number;
  requestTimeoutPerTokenMs?: number;
}

export interface AcceptOptions {
  /** The device id this connection was opened for (from its signaling peer id); a hello must say the same. */
  peerDeviceId?: string;
  helloTimeoutMs?: number;
}


export type HostEvent =
  | { type: 'devices'; devices: DeviceInfo[] }
  | { type: 'joined'; device: DeviceInfo }
  | { type: 'left'; device: DeviceInfo; why: string; detectedAt: number }
  | { type: 'ready'; epoch: number; deal: DealEntry[]; context: RoomContext }
  | { type: 'deal-error'; error: Error }
  | { type: 'frame-error'; deviceId: string | null; error: Error }
  /** Rows came back from a stage of the pipeline: these devices' layers ran them (a prefill chunk, a decode step). */
  | { type: 'rows'; deviceIds: string[]; rows: number };

/** The context a deal holds: `ctx` of the `want`ed one, and whether one more device would hold all of it. */
export interface RoomContext { ctx: number; want: number; oneMoreDeviceHolds: boolean }
