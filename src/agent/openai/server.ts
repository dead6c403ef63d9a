// Talking to an OpenAI-compatible server: its base URL, what kind it is (llama.cpp, vLLM, Ollama or
// another), its context size when it says, whether it serves the model, and its errors in its own words.
// Every request has a time limit; every body read is bounded. No request is followed to another origin:
// a redirect there (a 307 would send the whole prompt along) is refused by name (fetchHere).

export type ServerKind = 'llama.cpp' | 'vllm' | 'ollama' | 'openai';

/** The server could not be used; the message quotes what it said (or why it could not be reached). */
export class ServerError extends Error {
  override name = 'ServerError';
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

export interface ServerInfo {
  base: string;                // http://host:port (no /v1)
  kind: ServerKind;
  /** The context the server runs the model with, when it says. */
  contextSize?: number;
  /** Model ids from /v1/models (empty when it does not list them). */
  models: string[];
}

const PROBE_MS = 5_000;
const MAX_BODY = 1 << 20;

/** "http://localhost:8080/v1/" -> "http://localhost:8080"; refuses what is not an http(s) URL. */
export function serverBase(url: string): string {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    throw new ServerError(`${JSON.stringify(url)} is not a URL: give the server's address, like http://127.0.0.1:8080`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ServerError(`the server URL must be http(s), not ${u.protocol}`);
  return `${u.origin}${u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

/** The server redirected a request (to another origin, or in a way we do not follow); nothing was sent there. */
export class RedirectRefused extends ServerError {
  override name = 'RedirectRefused';
}

const MAX_SAME_ORIGIN_HOPS = 3;

/**
 * fetch that follows a redirect only within the same origin (and only one that keeps the method and
 * body: 307/308, or any for a GET), at most 3 hops; any other redirect is a RedirectRefused naming
 * where it pointed. A browser hides where a redirect goes (an opaque redirect): refused as well.
 */
export async function fetchHere(fetchFn: typeof fetch, url: string, init: RequestInit = {}): Promise<Response> {
  const origin = new URL(url).origin;
  const method = init.method ?? 'GET';
  let target = url;
  for (let hop = 0; ; hop++) {
    const res = await fetchFn(target, { ...init, redirect: 'manual' });
    const what = `${method} ${new URL(target).pathname}`;
    if (res.type === 'opaqueredirect') {
      throw new RedirectRefused(`the server at ${origin} redirected ${what} (the browser does not say where): redirects are not followed; give the server's own address`);
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null) return res;
    await res.body?.cancel().catch(() => undefined);
    let next: URL;
    try {
      next = new URL(location, target);
    } catch {
      throw new RedirectRefused(`the server at ${origin} redirected ${what} to ${JSON.stringify(location.slice(0, 200))}, which is not a URL`);
    }
    if (next.origin !== origin) {
      throw new RedirectRefused(`the server at ${origin} redirected ${what} to another origin (${next.origin}) with ${res.status}: refused, nothing was sent there; if that is the server, give its address`);
    }
    if (method !== 'GET' && res.status !== 307 && res.status !== 308) {
      throw new RedirectRefused(`the server at ${origin} answered ${what} with ${res.status} to ${next.pathname}, which would turn it into a GET: refused`);
    }
    if (hop + 1 >= MAX_SAME_ORIGIN_HOPS) throw new RedirectRefused(`the server at ${origin} redirected ${what} more than ${MAX_SAME_ORIGIN_HOPS - 1} times`);
    target = next.href;
  }
}

/**
 * fetch with `Authorization: Bearer KEY` on every request (a server that wants a key: a pooled room's
 * endpoint, a hosted API); `fetchFn` itself when there is no key. fetchHere never follows a redirect to
 * another origin, so the key goes only to the server it was given for.
 */
export function withApiKey(key: string | undefined, fetchFn: typeof fetch = fetch): typeof fetch {
  if (!key) return fetchFn;
  return (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${key}`);
    return fetchFn(input, { ...init, headers });
  };
}

/** GET a JSON document with a time limit; null when the server has no such route (or it is not JSON). */
async function getJson(fetchFn: typeof fetch, url: string, signal?: AbortSignal): Promise<Record<string, unknown> | null> {
  const res = await fetchHere(fetchFn, url, { signal: timeoutSignal(PROBE_MS, signal) }).catch((e: Error) => {
    if (signal?.aborted || e instanceof RedirectRefused) throw e;
    return null;
  });
  if (!res || !res.ok) return null;
  try {
    const body = JSON.parse(await readBounded(res, MAX_BODY)) as unknown;
    return body && typeof body === 'object' ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** What the server is, from the routes only its kind answers; and its models and context. */
export async function probeServer(url: string, model: string, fetchFn: typeof fetch = fetch): Promise<ServerInfo> {
  const base = serverBase(url);
  const list = await fetchHere(fetchFn, `${base}/v1/models`, { signal: timeoutSignal(PROBE_MS) }).catch((e: Error) => {
    if (e instanceof RedirectRefused) throw e;
    throw new ServerError(`the server at ${base} cannot be reached: ${causeOf(e)}`);
  });
  if (!list.ok) throw new ServerError(`the server at ${base} answered GET /v1/models with ${await describeError(list)}`, list.status);
  let models: string[] = [];
  let contextSize: number | undefined;
  try {
    const body = JSON.parse(await readBounded(list, MAX_BODY)) as { data?: { id?: unknown; max_model_len?: unknown }[] };
    models = (body.data ?? []).map((m) => String(m.id ?? '')).filter(Boolean);
    const entry = (body.data ?? []).find((m) => m.id === model);
    if (typeof entry?.max_model_len === 'number') contextSize = entry.max_model_len;
  } catch {
    throw new ServerError(`the server at ${base} answered GET /v1/models with something that is not the OpenAI model list`);
  }
  if (models.length > 0 && !models.includes(model)) {
    throw new ServerError(`the server at ${base} has no model ${JSON.stringify(model)}; it serves: ${models.slice(0, 10).join(', ')}`, 404);
  }
  let kind: ServerKind = 'openai';
  const props = await getJson(fetchFn, `${base}/props`);
  const settings = props?.default_generation_settings as { n_ctx?: unknown } | undefined;
  if (props && (settings || 'total_slots' in props)) {
    kind = 'llama.cpp';
    const nCtx = settings?.n_ctx ?? (props as { n_ctx?: unknown }).n_ctx;
    if (typeof nCtx === 'number' && nCtx > 0) contextSize ??= nCtx;
  } else if (contextSize !== undefined || (await getJson(fetchFn, `${base}/version`))?.version !== undefined) {
    kind = 'vllm';
  } else if ((await getJson(fetchFn, `${base}/api/version`))?.version !== undefined) {
    kind = 'ollama';
  }
  const info: ServerInfo = { base, kind, models };
  if (contextSize !== undefined) info.contextSize = contextSize;
  return info;
}

/** "500: model crashed" from a failed response, quoting the server's own message. */
export async function describeError(res: Response): Promise<string> {
  let text = '';
  try {
    text = await readBounded(res, 16 * 1024);
  } catch {
    /* keep the status alone */
  }
  return `${res.status}${res.statusText ? ` ${res.statusText}` : ''}: ${serverMessage(text) || '(no message)'}`;
}

/** The message inside an OpenAI-style error body ({"error": {"message"}}, {"error": "…"}, {"detail"}), else the text. */
export function serverMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const e = body.error;
    if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
    for (const v of [e, body.message, body.detail]) if (typeof v === 'string') return v;
  } catch {
    /* not JSON */
  }
  return text.trim().slice(0, 500);
}

/** A body read to its end, refused past `max` bytes. */
export async function readBounded(res: Response, max: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new ServerError(`the server's answer is over ${max} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.byteLength; }
  return new TextDecoder().decode(all);
}

/** An abort signal after `ms`, or when `parent` aborts. */
export function timeoutSignal(ms: number, parent?: AbortSignal): AbortSignal {
  const t = AbortSignal.timeout(ms);
  return parent ? AbortSignal.any([t, parent]) : t;
}

/** Node's fetch hides the socket error in `cause`. */
export function causeOf(e: Error): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? e.message;
}
