// The room as an OpenAI-compatible endpoint (docs/api.md): the routes under /v1 for clients, the
// WebSocket at /v1/host for host tabs. The server keeps no conversation and no statistics: it checks
// and relays.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type express from 'express';
import { HostRegistry } from './host-registry.ts';
import { HostSockets } from './host-sockets.ts';
import { apiConfig, type ApiOptions } from './limits.ts';
import { apiRouter } from './routes.ts';

export type { ApiLimits, ApiOptions } from './limits.ts';
export { DEFAULT_API_LIMITS } from './limits.ts';

export const API_PATH = '/v1';

export interface Api {
  router: express.Router;
  /** Takes the host-socket upgrade; false for other paths. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): void;
}

export function createApi(opts: ApiOptions = {}): Api {
  const config = apiConfig(opts);
  const registry = new HostRegistry(config.limits.maxHosts, config.limits.closedKeysRemembered);
  const sockets = new HostSockets(registry, config.limits);
  return {
    router: apiRouter(config, registry),
    handleUpgrade: (req, socket, head) => sockets.handleUpgrade(req, socket, head),
    close: () => sockets.close(),
  };
}
