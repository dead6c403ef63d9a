// The OpenAI-compatible routes under /v1: GET /models (and /models/:id), POST /chat/completions and
// POST /completions, relayed to the host tab the bearer key belongs to. Order per request: CORS, the key
// (401 unknown, 503 host tab closed), the body (413 too big, 400 not JSON or out of bounds, 404 unknown
// model), the host's open requests (429 when full), then the relay. Anything else under /v1 is an OpenAI
// 404, never the app's page.
import express, { type NextFunction, type Request, type Response } from 'express';
import { MAX_CLIENT_CHARS } from '../../src/api/relay-wire.ts';
import { bearerDigest } from './auth.ts';
import { apiCors } from './cors.ts';
import { sendError } from './errors.ts';
import { checkBody, REQUEST_ROUTES, type RequestRoute } from './bounds.ts';
import { HOST_CLOSED_MESSAGE, type HostConnection } from './host-connection.ts';
import type { HostRegistry } from './host-registry.ts';
import type { ApiConfig } from './limits.ts';

export function apiRouter(config: ApiConfig, registry: HostRegistry): express.Router {
  const router = express.Router();
  router.use(apiCors(config.corsOrigins));
  router.use((req, res, next) => {
    const digest = bearerDigest(req.headers);
    const found = digest ? registry.find(digest) : { state: 'unknown' as const };
    if (found.state === 'live') { res.locals.host = found.host; next(); return; }
    if (found.state === 'closed') { sendError(res, 503, HOST_CLOSED_MESSAGE, 'host_closed'); return; }
    sendError(res, 401, 'Incorrect API key provided: use the key the host screen shows (Authorization: Bearer KEY)', 'invalid_api_key');
  });

  router.get('/models', (_req, res) => {
    const host = hostOf(res);
    res.json({ object: 'list', data: host.models.map((m) => modelEntry(host, m.id)) });
  });
  // A model id may hold a slash ("Qwen/Qwen3-8B"): the rest of the path is the id.
  router.get(/^\/models\/(.+)$/, (req, res) => {
    const host = hostOf(res);
    const id = String((req.params as Record<string, string>)[0] ?? '');
    if (host.model(id)) res.json(modelEntry(host, id));
    else sendError(res, 404, `The model \`${id.slice(0, 200)}\` does not exist`, 'model_not_found', 'model');
  });

  const json = express.json({ limit: config.limits.maxBodyBytes, strict: true, type: () => true });
  for (const route of REQUEST_ROUTES) router.post(route.path, json, (req, res) => relay(route, req, res, config));

  router.use((_req, res) => { sendError(res, 404, 'no such endpoint: this server answers /v1/models, /v1/chat/completions and /v1/completions', 'not_found'); });
  router.use(bodyErrors);
  return router;
}

function relay(route: RequestRoute, req: Request, res: Response, config: ApiConfig): void {
  const host = hostOf(res);
  const checked = checkBody(route, req.body, host.models, config.limits);
  if (!checked.ok) {
    const r = checked.refusal;
    sendError(res, r.status, r.message, r.code, r.param);
    return;
  }
  // The client may have left while its body was read: then nothing would ever cancel the host's work.
  if (!res.socket || res.socket.destroyed) return;
  const client = String(req.headers['user-agent'] ?? '').slice(0, MAX_CLIENT_CHARS);
  if (!host.relay(route.kind, checked.body, client, res)) {
    sendError(res, 429, `the room has ${config.limits.maxOpenPerHost} requests open already; retry when one ends`, 'rate_limit_exceeded');
  }
}

const hostOf = (res: Response): HostConnection => res.locals.host as HostConnection;

/** OpenAI's model object, plus the context as vLLM names it (clients that read it size max_tokens to fit). */
function modelEntry(host: HostConnection, id: string) {
  return { id, object: 'model', created: host.since, owned_by: 'pooled', max_model_len: host.model(id)?.contextSize };
}

/** body-parser's errors as OpenAI's (too big, not JSON, a body it cannot read); anything else is ours: 500. */
function bodyErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) { next(err); return; }
  const type = String((err as { type?: unknown }).type ?? '');
  const status = Number((err as { status?: unknown }).status);
  if (type === 'entity.too.large') sendError(res, 413, 'the request body is too big', 'request_too_large');
  else if (type === 'entity.parse.failed') sendError(res, 400, 'the body is not valid JSON', 'invalid_json');
  else if (type !== '' && status >= 400 && status < 500) sendError(res, status, 'the request body could not be read (send UTF-8 JSON)', null);
  else sendError(res, 500, 'the server failed on this request', null);
}
