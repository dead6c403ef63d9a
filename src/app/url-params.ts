// The app's URL parameters (seed spec "Pick a model"):
//   ?model=<HF id | URL | tiny>   the model to host (skips the picker's default)
//   ?draft=<HF id | URL | tiny>   hosting: a draft model for speculative decoding (same tokenizer), loaded once the room is open
//   ?ctx=<tokens>                 context size (default: by model size, see defaultContextFor; tools need about 8k)
//   ?ckpt=<n>                     answer checkpoints kept (default 4; 0 = off, the pinned one too)
//   ?kv=f16|q8_0                  hosting: the KV cache type of every device (default f16; q8_0 about halves it)
//   ?room=<32 hex>                join this room as a guest (the invite link)
//   ?engine=<kind>                which engine runs this device's layers: a row of src/engines/table.ts
//                                 (webgpu, wasm, reference; default: the fastest of a short measured probe
//                                 at join, src/room/engine-probe.ts; wasm: the WebAssembly SIMD engine of
//                                 src/cpu for devices without a usable GPU)
//   ?<option>=<value>             an engine row's own options, validated against its row: the WASM
//                                 engine's ?simd=auto|relaxed|plain and ?cpu-activations=f32|q8
//                                 (src/cpu/engine-row.ts says what they do)
//   ?agent=replay&script=<url>    the agent workspace on a scripted model (JSONL of {"text": ...})
//   &delay=<ms>                   replay: wait per token so the answer visibly streams (default 15)
//   &grammar=0                    replay: sample without the call grammar, as a server that takes none
//                                 would (the near-miss parser alone reads the calls)
//   ?name=<device name>
//   ?mem=<GiB>                    memory this device offers the room (default: half of navigator.deviceMemory, else 2)
//   ?seed=<n>                     hosting: the sampling seed of every answer (default: a random one each): reproducible answers for tests and demos
//   ?speed=<n>                    this device's speed for dealing, instead of the quick measurement (tests, demos)
//   ?server=<url>&server-model=<name>&tokenizer=<src>   the agent on an OpenAI-compatible server (src/app/server-session.ts)

import { isKvCacheType, KV_CACHE_TYPES, type KvCacheType } from '../model/kv-quant.ts';
import { memoryBudgetFromGiB } from './memory-budget.ts';
import type { EngineKind, EngineOptions, EngineTable } from '../engines/contract.ts';
import { ENGINES } from '../engines/table.ts';

/** The context of a scripted replay workspace (its model is the tiny one): the small models' default. */
export const DEFAULT_CTX = 8192;
/** The demo workspace's script (what "Open the demo workspace" replays). */
export const DEMO_SCRIPT = '/replay/demo.jsonl';
export const DEFAULT_CKPT = 4;
export const SMALL_CONTEXT = 8192;

export interface AppParams {
  model?: string;
  /** ?draft=: the host's draft model (the room panel's draft field sets it too). */
  draft?: string;
  /** ?ctx=; absent = the model's default context (src/agent/budget.ts defaultContextFor). */
  ctx?: number;
  /** ?kv=: the room's KV cache type (absent: f16). */
  kv?: KvCacheType;
  ckpt: number;
  room?: string;
  /** ?engine=: a kind of the engine table (absent: the probe's fastest). */
  engine?: EngineKind;
  /** The engine rows' options the URL gives (?simd=plain, ?cpu-activations=q8): each checked against its row. */
  engineOptions?: EngineOptions;
  agent?: 'replay';
  script?: string;
  delay: number;
  name?: string;
  speed?: number;
  /** ?seed=: every answer sampled with this seed (the same prompt then gives the same tokens). */
  seed?: number;
  /** ?mem= in bytes: the memory budget this device offers the room. */
  memoryBudgetBytes?: number;
  /** Edits ask first (approval cards); also a toggle in the workspace. */
  ask?: boolean;
  /** The agent on an OpenAI-compatible server instead of a room. */
  server?: { url: string; model: string; tokenizer: string };
  /** Replay: false = no call grammar while sampling (&grammar=0). */
  grammar?: boolean;
}

/** A URL parameter has a value the app cannot use. Names the parameter and says what is allowed. */
export class UrlParamError extends Error {
  override name = 'UrlParamError';
  readonly code = 'url-param';
  constructor(readonly param: string, detail: string) {
    super(`?${param}= ${detail}`);
  }
}

function wholeNumber(q: URLSearchParams, name: string, fallback: number, min: number, max: number): number;
function wholeNumber(q: URLSearchParams, name: string, fallback: undefined, min: number, max: number): number | undefined;
function wholeNumber(q: URLSearchParams, name: string, fallback: number | undefined, min: number, max: number): number | undefined {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new UrlParamError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new UrlParamError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function parseAppParams(search: string): AppParams {
  const q = new URLSearchParams(search);
  const params: AppParams = {
    ckpt: wholeNumber(q, 'ckpt', DEFAULT_CKPT, 0, 64),
    delay: wholeNumber(q, 'delay', 15, 0, 5000),
  };
  const seed = wholeNumber(q, 'seed', undefined, 0, 2 ** 32 - 1);
  if (seed !== undefined) params.seed = seed;
  const ctx = wholeNumber(q, 'ctx', undefined, 256, 262_144);
  if (ctx !== undefined) params.ctx = ctx;
  const kv = q.get('kv');
  if (kv !== null && kv !== '') {
    if (!isKvCacheType(kv)) throw new UrlParamError('kv', `must be ${KV_CACHE_TYPES.join(' or ')}, got "${kv}"`);
    params.kv = kv;
  }
  const model = q.get('model')?.trim();
  if (model) params.model = model;
  const draft = q.get('draft')?.trim();
  if (draft) params.draft = draft;
  const room = q.get('room')?.trim();
  if (room) {
    if (!/^[0-9a-f]{32}$/.test(room)) throw new UrlParamError('room', `must be a room id of 32 hex digits (open the whole invite link), got "${room}"`);
    params.room = room;
  }
  const engine = q.get('engine');
  if (engine) params.engine = engineOf(engine, ENGINES);
  const options = engineOptionsOf(q, ENGINES);
  if (options) params.engineOptions = options;
  const agent = q.get('agent');
  if (agent) {
    if (agent !== 'replay') throw new UrlParamError('agent', `must be replay (a scripted model for trying the workspace), got "${agent}"`);
    params.agent = agent;
    params.script = q.get('script') ?? DEMO_SCRIPT;
    const grammar = q.get('grammar');
    if (grammar !== null) params.grammar = grammar !== '0' && grammar !== 'false';
  }
  const name = q.get('name')?.trim();
  if (name) params.name = name.slice(0, 40);
  const speed = q.get('speed');
  if (speed !== null && speed !== '') {
    const n = Number(speed);
    if (!(Number.isFinite(n) && n > 0)) throw new UrlParamError('speed', `must be a positive number, got "${speed}"`);
    params.speed = n;
  }
  const mem = q.get('mem');
  if (mem !== null && mem !== '') {
    try {
      params.memoryBudgetBytes = memoryBudgetFromGiB(mem);
    } catch (e) {
      throw new UrlParamError('mem', (e as Error).message.replace(/^memory /, ''));
    }
  }
  const ask = q.get('ask');
  if (ask !== null) params.ask = ask !== '0' && ask !== 'false';
  const server = q.get('server')?.trim();
  if (server) {
    if (!/^https?:\/\//i.test(server)) throw new UrlParamError('server', `must be an http(s) URL of an OpenAI-compatible server, got "${server}"`);
    const model = q.get('server-model')?.trim();
    if (!model) throw new UrlParamError('server-model', 'names the model on the server (it goes with ?server=)');
    params.server = { url: server, model, tokenizer: q.get('tokenizer')?.trim() || 'Qwen/Qwen3-1.7B' };
  }
  return params;
}

/** Context warnings the room shows: tools need about 8k tokens of context to work well. */
export function contextWarning(ctx: number): string | null {
  return ctx < SMALL_CONTEXT
    ? `Context is ${ctx.toLocaleString('en-US')} tokens: tools need about 8k to work well, and older results will be trimmed often. Raise ?ctx= if the room's memory allows.`
    : null;
}

/** ?engine='s value, checked against the table's kinds. */
export function engineOf(engine: string, engines: EngineTable): EngineKind {
  const kinds = Object.keys(engines);
  if (!engines[engine]) throw new UrlParamError('engine', `must be ${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}, got "${engine}"`);
  return engine;
}

/** The engine rows' options present in the URL, each checked against the values its row takes; undefined when none. */
export function engineOptionsOf(q: URLSearchParams, engines: EngineTable): EngineOptions | undefined {
  const out: Record<string, string> = {};
  for (const row of Object.values(engines)) {
    for (const o of row.options) {
      const v = q.get(o.param);
      if (!v) continue;
      if (!o.values.includes(v)) throw new UrlParamError(o.param, `must be ${o.values.slice(0, -1).join(', ')} or ${o.values.at(-1)}, got "${v}"`);
      out[o.param] = v;
    }
  }
  return Object.keys(out).length ? out : undefined;
}
