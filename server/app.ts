// The app's one Node process: static app (or Vite in dev), the PeerJS signaling server under /signal,
// the OpenAI-compatible endpoint under /v1 (server/api: host tabs relay it to their room), and any extra
// routes (model files for the built-in tiny model), all on one port. Anyone can reach it:
// signaling connections are checked and bounded (signal-guard.ts), every other upgrade is refused and
// closed, error pages say only the status, and dotfiles are never served.
import http from 'node:http';
import path from 'node:path';
import { existsSync } from 'node:fs';
import express from 'express';
import { ExpressPeerServer } from 'peer';
import { WebSocketServer, type ServerOptions } from 'ws';
import { API_PATH, createApi, type ApiOptions } from './api/index.ts';
import { compressedStatic } from './compressed-static.ts';
import { ISOLATION_HEADERS, MODEL_HOST_HEADERS } from './isolation.ts';
import { guardSignalUpgrade, PEER_ID, PerAddress, refuseUpgrade, remoteAddress, SIGNAL_LIMITS } from './signal-guard.ts';

export interface ServerOptionsIn {
  port?: number;              // 0 = any free port
  host?: string;              // default 127.0.0.1
  dev?: boolean;              // Vite middleware mode (HMR) instead of dist/
  root?: string;              // project root (where dist/ and index.html live)
  extraStatic?: Record<string, string>; // url prefix -> folder, served with Range support
  /** Answered at /pooled-config.json (signaling URL, STUN/TURN, run_js); default from POOLED_SIGNAL_URL / POOLED_ICE_SERVERS / POOLED_RUN_JS. */
  deployConfig?: DeployConfigOut;
  /** Send the cross-origin isolation headers (ISOLATION_HEADERS) on every response; default true. */
  isolated?: boolean;
  /** The OpenAI-compatible endpoint's limits and CORS origins (default: server/api/limits.ts, POOLED_API_CORS). */
  api?: ApiOptions;
}

export { ISOLATION_HEADERS, MODEL_HOST_HEADERS };

export interface RunningServer {
  url: string;
  port: number;
  peerServer: ReturnType<typeof ExpressPeerServer>;
  close(): Promise<void>;
}

export const SIGNAL_PATH = '/signal';

/** A path the single-page app answers itself: its last segment has no file extension. */
export function isAppRoute(urlPath: string): boolean {
  const last = urlPath.slice(urlPath.lastIndexOf('/') + 1);
  return !last.includes('.');
}

export async function startServer(opts: ServerOptionsIn = {}): Promise<RunningServer> {
  const root = opts.root ?? process.cwd();
  const host = opts.host ?? '127.0.0.1';
  const app = express();
  const httpServer = http.createServer(app);
  if (opts.isolated ?? true) {
    app.use((_req, res, next) => { for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.setHeader(k, v); next(); });
  }

  // PeerJS: its WebSocket server must not answer other upgrades (Vite HMR) with 400, so we create it
  // detached (noServer) and route upgrades for /signal/peerjs to it ourselves.
  let signalSockets: WebSocketServer | undefined;
  const peerServer = ExpressPeerServer(httpServer, {
    path: '/',
    allow_discovery: false,
    concurrent_limit: SIGNAL_LIMITS.concurrentPeers,
    createWebSocketServer: (o: ServerOptions) =>
      (signalSockets = new WebSocketServer({ noServer: true, path: o.path, maxPayload: SIGNAL_LIMITS.maxMessageBytes })),
  });
  // PeerJS also answers GET /signal/peerjs/id with a fresh id: fine, those are uuids.
  app.use(SIGNAL_PATH, peerServer);
  // PeerJS re-emits every socket error (a message that is too big or not JSON) on its app; without a
  // listener Node throws it, and one client's bad message would end the whole process.
  peerServer.on('error', () => undefined);
  relayRoomDisconnects(app, peerServer);

  const deployConfig = opts.deployConfig ?? deployConfigFromEnv();
  app.get('/pooled-config.json', (_req, res) => { res.json(deployConfig); });

  const api = createApi(opts.api);
  app.use(API_PATH, api.router);

  for (const [prefix, dir] of Object.entries(opts.extraStatic ?? {})) {
    // dotfiles 'ignore': a .env or .git beside the model files is a 404, never served.
    // Text files (tokenizer.json, configs) compressed; weights by Range as they are.
    app.use(prefix, (req, res, next) => {
      for (const [k, v] of Object.entries(MODEL_HOST_HEADERS)) res.setHeader(k, v);
      // The CORS preflight a Range request from another origin may send.
      if (req.method === 'OPTIONS') { res.setHeader('Access-Control-Allow-Headers', 'Range'); res.status(204).end(); return; }
      next();
    }, compressedStatic(dir, { immutable: false }), express.static(dir, { acceptRanges: true, fallthrough: false, dotfiles: 'ignore' }));
  }

  let closeVite: (() => Promise<void>) | undefined;
  if (opts.dev) {
    const { createServer } = await import('vite');
    const vite = await createServer({ root, server: { middlewareMode: true, hmr: { server: httpServer } }, appType: 'spa' });
    app.use(vite.middlewares);
    closeVite = () => vite.close();
  } else {
    const dist = path.join(root, 'dist');
    if (!existsSync(path.join(dist, 'index.html'))) {
      throw new Error(`No built app in ${dist}: run \`npm run build\` first (npm start does it for you).`);
    }
    app.use(compressedStatic(dist, { immutable: true }), express.static(dist, { index: 'index.html' }));
    // The app's own routes (a path whose last part has no extension: "/", "/room/abc") get the page; a
    // missing file (a model's config.json, main.js.map) is a 404, so a wrong model URL here reads as "not
    // found", not as an HTML page that is no GGUF.
    app.get(/.*/, (req, res) => {
      if (isAppRoute(req.path)) res.sendFile(path.join(dist, 'index.html'));
      else res.status(404).type('text/plain').send(`not found: ${req.path.slice(0, 200)}\n`);
    });
  }
  app.use(quietErrors);

  const perAddress = new PerAddress(SIGNAL_LIMITS.socketsPerAddress);
  httpServer.on('upgrade', (req, socket, head) => {
    if (api.handleUpgrade(req, socket, head)) return;
    if (signalSockets && guardSignalUpgrade(signalSockets, perAddress, `${SIGNAL_PATH}/peerjs`, req, socket, head)) return;
    // Vite's HMR socket (dev only) is answered by the listener Vite added itself; anything else would
    // otherwise hang forever, holding a socket: refuse it and close.
    if (opts.dev && /^vite-(hmr|ping)$/.test(String(req.headers['sec-websocket-protocol'] ?? ''))) return;
    refuseUpgrade(socket, 404, 'no WebSocket here');
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(opts.port ?? 0, host, () => resolve());
  });
  const address = httpServer.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const urlHost = host === '0.0.0.0' ? 'localhost' : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    peerServer,
    async close() {
      await closeVite?.();
      api.close();
      signalSockets?.clients.forEach((c) => c.terminate());
      httpServer.closeAllConnections();
      await new Promise<void>((r) => httpServer.close(() => r()));
    },
  };
}

/**
 * Room hosts learn within milliseconds that a guest's signaling socket closed (a closed tab), long before
 * WebRTC notices (15–18 s): GET /room-events/<roomId> is a server-sent event stream of
 * `disconnect` events carrying the peer ids of that room (ids start with `pooled-<roomId>-`).
 * Knowing the unguessable room id is the capability, as for joining.
 */
export const ROOM_EVENTS_PATH = '/room-events';
/** Watchers of one room (its host, maybe a reloaded tab), per address, and in all. */
export const WATCH_LIMITS = { perRoom: 4, perAddress: 16, total: 256 } as const;
function relayRoomDisconnects(app: express.Express, peerServer: ReturnType<typeof ExpressPeerServer>): void {
  const watchers = new Map<string, Set<express.Response>>();
  const perAddress = new PerAddress(WATCH_LIMITS.perAddress);
  let total = 0;
  peerServer.on('disconnect', (client: { getId(): string }) => {
    const id = client.getId();
    // Ids are checked when they connect (signal-guard.ts); checked again here, whole, before one is
    // written into an event stream, where a newline would start a forged event.
    const m = /^pooled-([0-9a-f]{32})-[0-9a-z]{1,64}$/.exec(id);
    if (!m || !PEER_ID.test(id)) return;
    for (const res of watchers.get(m[1]!) ?? []) res.write(`event: disconnect\ndata: ${id}\n\n`);
  });
  app.get(`${ROOM_EVENTS_PATH}/:roomId`, (req, res) => {
    const roomId = req.params.roomId ?? '';
    if (!/^[0-9a-f]{32}$/.test(roomId)) { res.status(400).type('text/plain').send('room id must be 32 hex digits'); return; }
    const set = watchers.get(roomId) ?? new Set();
    const release = set.size < WATCH_LIMITS.perRoom && total < WATCH_LIMITS.total ? perAddress.take(remoteAddress(req)) : null;
    if (!release) { res.status(429).type('text/plain').send('too many watchers'); return; }
    total++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(': watching\n\n');
    watchers.set(roomId, set);
    set.add(res);
    req.on('close', () => {
      total--;
      release();
      set.delete(res);
      if (set.size === 0 && watchers.get(roomId) === set) watchers.delete(roomId);
    });
  });
}

/** Error pages with the status and a word, never a stack trace or a path (Express's default shows both outside production). */
function quietErrors(err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction): void {
  if (res.headersSent) { next(err); return; }
  const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string };
  const status = Number(e.status ?? e.statusCode);
  const code = Number.isInteger(status) && status >= 400 && status < 600 ? status : 500;
  res.status(code).type('text/plain').send(http.STATUS_CODES[code] ?? 'Error');
}

export interface DeployConfigOut { signalUrl?: string; iceServers?: unknown[]; runJs?: boolean }

/**
 * POOLED_SIGNAL_URL (e.g. https://signal.example.com/signal), POOLED_ICE_SERVERS (JSON list) and
 * POOLED_RUN_JS (0/false/off turns the agent's run_js off; unset = on, as for a local `npm start`).
 */
export function deployConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DeployConfigOut {
  const out: DeployConfigOut = {};
  const runJs = env.POOLED_RUN_JS?.trim().toLowerCase();
  if (runJs !== undefined && runJs !== '') {
    if (['0', 'false', 'off', 'no'].includes(runJs)) out.runJs = false;
    else if (['1', 'true', 'on', 'yes'].includes(runJs)) out.runJs = true;
    else throw new Error(`POOLED_RUN_JS must be 1 or 0 (on or off), not ${JSON.stringify(env.POOLED_RUN_JS)}`);
  }
  if (env.POOLED_SIGNAL_URL) out.signalUrl = env.POOLED_SIGNAL_URL;
  if (env.POOLED_ICE_SERVERS) {
    try {
      out.iceServers = JSON.parse(env.POOLED_ICE_SERVERS) as unknown[];
    } catch {
      throw new Error(`POOLED_ICE_SERVERS is not JSON: ${env.POOLED_ICE_SERVERS}`);
    }
  }
  return out;
}
