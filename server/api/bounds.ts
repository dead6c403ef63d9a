// What a client's body must be before it is relayed (the host tab checks the rest: roles, content
// parts, tools). One row per request kind (REQUEST_ROUTES); the checks common to both come first.
// A refusal names the field, as OpenAI's `param` does.
import { isJsonObject, type JsonObject, type RequestKind, type WireModel } from '../../src/api/relay-wire.ts';
import type { ApiLimits } from './limits.ts';

export interface Refusal { status: 400 | 404; message: string; param: string | null; code: string | null }
export type BodyCheck = { ok: true; body: JsonObject; model: WireModel } | { ok: false; refusal: Refusal };

const bad = (message: string, param: string | null = null): BodyCheck => ({ ok: false, refusal: { status: 400, message, param, code: null } });

type KindCheck = (body: JsonObject, model: WireModel, limits: ApiLimits) => BodyCheck | null;

export interface RequestRoute { kind: RequestKind; path: string; check: KindCheck }

const checkMessages: KindCheck = (body, _model, limits) => {
  const m = body.messages;
  if (!Array.isArray(m) || m.length < 1 || m.length > limits.maxMessages) return bad(`messages must be a list of 1 to ${limits.maxMessages} messages`, 'messages');
  const i = m.findIndex((x) => !isJsonObject(x) || typeof x.role !== 'string');
  return i < 0 ? null : bad(`messages[${i}] must be an object with a role`, `messages[${i}]`);
};

const checkPrompt: KindCheck = (body, model) => {
  const p = body.prompt;
  if (typeof p === 'string') return null;
  if (Array.isArray(p) && p.length === 1 && typeof p[0] === 'string') return null;
  if (Array.isArray(p) && p.length >= 1 && p.length <= model.contextSize && p.every((t) => Number.isInteger(t) && (t as number) >= 0)) return null;
  return bad('prompt must be a string, or a list of token ids no longer than the context (one prompt per request)', 'prompt');
};

export const REQUEST_ROUTES: readonly RequestRoute[] = [
  { kind: 'chat', path: '/chat/completions', check: checkMessages },
  { kind: 'completion', path: '/completions', check: checkPrompt },
];

/** Checks a parsed body against the host's models and the limits. */
export function checkBody(route: RequestRoute, body: unknown, models: readonly WireModel[], limits: ApiLimits): BodyCheck {
  if (!isJsonObject(body)) return bad('the body must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') return bad('model is required: one of the ids GET /v1/models lists', 'model');
  const model = models.find((m) => m.id === body.model);
  if (!model) {
    return { ok: false, refusal: { status: 404, message: `The model \`${body.model.slice(0, 200)}\` does not exist; this room serves ${models.map((m) => m.id).join(', ')}`, param: 'model', code: 'model_not_found' } };
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') return bad('stream must be true or false', 'stream');
  if (body.n !== undefined && body.n !== null && body.n !== 1) return bad('n must be 1: the room samples one choice per request', 'n');
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > model.contextSize) {
      return bad(`${field} must be a whole number from 1 to the model's context size, ${model.contextSize}`, field);
    }
  }
  return route.check(body, model, limits) ?? { ok: true, body, model };
}
