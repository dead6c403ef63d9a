// "Serve this room's model": the host tab's switch for the OpenAI-compatible endpoint (docs/api.md). Off
// by default; on, it opens the relay (src/api/relay-client.ts) with this tab's API key and answers the
// server's requests on the room's model through the queue it shares with the agent. The key is made here
// with crypto.getRandomValues and kept in this browser's storage (a reload keeps it, so editors keep
// working); the screen shows it with the base URL, the model id, the counters and one line per request.
import type { ApiModel } from '../api/api-model.ts';
import { RelayClient, type RelayStatus, type SocketLike } from '../api/relay-client.ts';
import { requestHandler, type ServedLine } from '../api/serve-requests.ts';
import { API_KEY_PATTERN } from '../api/relay-wire.ts';
import { Store } from './store.ts';

export const API_KEY_STORAGE = 'pooled.api-key';
/** Lines the screen keeps (the newest last). */
const LINES_KEPT = 50;

export interface ApiServeState {
  on: boolean;
  key: string;
  baseUrl: string;
  modelId: string;
  status: RelayStatus;
  served: number;
  tokensIn: number;
  tokensOut: number;
  lines: ServedLine[];
}

export interface ApiServeOptions {
  model: ApiModel;
  /** The page's origin: the endpoint is `${origin}/v1`. */
  origin: string;
  /** Where the key is kept (default: localStorage when there is one). */
  storage?: Pick<Storage, 'getItem' | 'setItem'>;
  /** Tests: a socket other than the browser's. */
  openSocket?: (url: string) => SocketLike;
}

/** 32 random bytes as base64url: 43 characters of [A-Za-z0-9_-] (relay-wire's API_KEY_PATTERN). */
export function newApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class ApiServe {
  readonly store: Store<ApiServeState>;
  private relay?: RelayClient;
  private readonly storage: Pick<Storage, 'getItem' | 'setItem'> | undefined;

  constructor(private readonly opts: ApiServeOptions) {
    this.storage = opts.storage ?? (typeof localStorage === 'undefined' ? undefined : localStorage);
    this.store = new Store<ApiServeState>({
      on: false, key: this.keptKey(), baseUrl: `${opts.origin}/v1`, modelId: opts.model.id, status: { kind: 'off' },
      served: 0, tokensIn: 0, tokensOut: 0, lines: [],
    });
  }

  get state(): ApiServeState { return this.store.state; }

  setOn(on: boolean): void {
    if (on === this.state.on) return;
    this.store.set({ on });
    if (!on) {
      this.relay?.stop();
      this.relay = undefined;
      return;
    }
    const { model } = this.opts;
    this.relay = new RelayClient({
      origin: this.opts.origin, key: this.state.key,
      models: () => [{ id: model.id, contextSize: model.backend.contextSize }],
      handle: requestHandler(() => model, (line) => this.served(line)),
      onStatus: (status) => this.store.set({ status }),
      ...(this.opts.openSocket ? { openSocket: this.opts.openSocket } : {}),
    });
    this.relay.start();
  }

  /** A new key: the old one stops working at once (the server forgets it: 401), and serving goes on with this one. */
  newKey(): void {
    const key = newApiKey();
    this.storage?.setItem(API_KEY_STORAGE, key);
    this.store.set({ key });
    if (!this.state.on) return;
    this.relay?.stop({ keyReplaced: true });
    this.relay = undefined;
    this.store.set({ on: false });
    this.setOn(true);
  }

  close(): void {
    this.relay?.stop();
  }

  private keptKey(): string {
    const kept = this.storage?.getItem(API_KEY_STORAGE);
    if (kept && API_KEY_PATTERN.test(kept)) return kept;
    const key = newApiKey();
    this.storage?.setItem(API_KEY_STORAGE, key);
    return key;
  }

  private served(line: ServedLine): void {
    const s = this.state;
    this.store.set({
      served: s.served + 1, tokensIn: s.tokensIn + line.promptTokens, tokensOut: s.tokensOut + line.completionTokens,
      lines: [...s.lines.slice(-(LINES_KEPT - 1)), line],
    });
  }
}
