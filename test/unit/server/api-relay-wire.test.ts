// The relay wire's validators: every frame kind in both directions is accepted when well formed and
// refused, with a reason, when a field is wrong (src/api/relay-wire.ts).
import { describe, expect, it } from 'vitest';
import { checkHostFrame, checkServerFrame, readHostFrame, readServerFrame, HOST_FRAME_CHECKS, SERVER_FRAME_CHECKS } from '../../../src/api/relay-wire.ts';

const KEY = 'k'.repeat(40);
const goodHost = {
  hello: { t: 'hello', v: 1, key: KEY, models: [{ id: 'qwen3-0.6b', contextSize: 4096 }] },
  chunk: { t: 'chunk', id: 'r1', data: { object: 'chat.completion.chunk' } },
  done: { t: 'done', id: 'r1' },
  error: { t: 'error', id: 'r1', status: 503, message: 'a device left', type: 'server_error' },
  ping: { t: 'ping' },
  pong: { t: 'pong' },
};
const goodServer = {
  ready: { t: 'ready' },
  refused: { t: 'refused', why: 'key already served' },
  request: { t: 'request', id: 'r1', kind: 'chat', body: { messages: [] }, client: 'OpenAI/JS 5' },
  cancel: { t: 'cancel', id: 'r1' },
  ping: { t: 'ping' },
  pong: { t: 'pong' },
};

describe('relay wire v1', () => {
  it('has a sample for every frame kind, and accepts each', () => {
    expect(Object.keys(goodHost).sort()).toEqual(Object.keys(HOST_FRAME_CHECKS).sort());
    expect(Object.keys(goodServer).sort()).toEqual(Object.keys(SERVER_FRAME_CHECKS).sort());
    for (const f of Object.values(goodHost)) expect(readHostFrame(JSON.stringify(f))).toEqual({ ok: true, frame: f });
    for (const f of Object.values(goodServer)) expect(readServerFrame(JSON.stringify(f))).toEqual({ ok: true, frame: f });
  });

  it('refuses what is not a frame, and kinds of the other direction', () => {
    expect(readHostFrame('not json').ok).toBe(false);
    expect(readHostFrame('[1]').ok).toBe(false);
    expect(checkHostFrame({ t: 'request', id: 'r', kind: 'chat', body: {}, client: '' }).ok).toBe(false);
    expect(checkServerFrame({ t: 'chunk', id: 'r', data: {} }).ok).toBe(false);
    expect(checkHostFrame({ t: 'toString' }).ok).toBe(false);
  });

  it.each([
    ['hello, wrong version', { ...goodHost.hello, v: 2 }],
    ['hello, short key', { ...goodHost.hello, key: 'abc' }],
    ['hello, key with a space', { ...goodHost.hello, key: `${KEY} ` }],
    ['hello, no models', { ...goodHost.hello, models: [] }],
    ['hello, five models', { ...goodHost.hello, models: [1, 2, 3, 4, 5].map((i) => ({ id: `m${i}`, contextSize: 8 })) }],
    ['hello, fractional context', { ...goodHost.hello, models: [{ id: 'm', contextSize: 1.5 }] }],
    ['hello, model id with newline', { ...goodHost.hello, models: [{ id: 'm\n', contextSize: 8 }] }],
    ['hello, same model twice', { ...goodHost.hello, models: [{ id: 'm', contextSize: 8 }, { id: 'm', contextSize: 9 }] }],
    ['chunk, data not an object', { ...goodHost.chunk, data: 'x' }],
    ['chunk, bad id', { ...goodHost.chunk, id: 'a b' }],
    ['done, response a list', { ...goodHost.done, response: [] }],
    ['error, status 200', { ...goodHost.error, status: 200 }],
    ['error, message not a string', { ...goodHost.error, message: 5 }],
  ])('refuses a host frame: %s', (_name, frame) => {
    const r = checkHostFrame(frame);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toMatch(/^\w+: /);
  });

  it.each([
    ['refused, why not a string', { t: 'refused' }],
    ['request, unknown kind', { ...goodServer.request, kind: 'embedding' }],
    ['request, body a list', { ...goodServer.request, body: [] }],
    ['request, client too long', { ...goodServer.request, client: 'x'.repeat(201) }],
    ['cancel, no id', { t: 'cancel' }],
  ])('refuses a server frame: %s', (_name, frame) => {
    expect(checkServerFrame(frame).ok).toBe(false);
  });
});
