// The relay client's bounds with a scripted socket: frames that fail relay-wire's checks are dropped and
// counted, unknown ids ignored, requests past the bound answered 429 at once, a dropped socket aborts
// what is in flight and is dialled again after a growing wait; a refused hello is not retried.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RelayClient, type RequestEnd, type SocketLike } from '../../../src/api/relay-client.ts';

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  send(text: string): void { this.sent.push(JSON.parse(text) as Record<string, unknown>); }
  close(): void { this.readyState = 3; this.onclose?.({}); }
  open(): void { this.readyState = 1; this.onopen?.({}); }
  frame(f: unknown): void { this.onmessage?.({ data: typeof f === 'string' ? f : JSON.stringify(f) }); }
}

afterEach(() => { vi.useRealTimers(); });

function client(handle: (signal: AbortSignal) => Promise<RequestEnd>, maxInFlight = 2) {
  const sockets: FakeSocket[] = [];
  const relay = new RelayClient({
    origin: 'https://pooled.example:8443', key: 'k'.repeat(40), models: () => [{ id: 'm', contextSize: 512 }],
    handle: (_r, _chunk, signal) => handle(signal), maxInFlight, retryMs: { first: 100, max: 400 },
    openSocket: (url) => { expect(url).toBe('wss://pooled.example:8443/v1/host'); const s = new FakeSocket(); sockets.push(s); return s; },
  });
  return { relay, sockets };
}

const request = (id: string) => ({ t: 'request', id, kind: 'chat', body: { model: 'm' }, client: 'test' });
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('RelayClient', () => {
  it('says hello, serves on ready, drops bad frames, ignores unknown cancels, answers 429 past its bound', async () => {
    const pending: (() => void)[] = [];
    const aborted: boolean[] = [];
    const { relay, sockets } = client((signal) => new Promise((resolve) => {
      pending.push(() => resolve({ kind: 'done', response: { ok: true } }));
      signal.addEventListener('abort', () => { aborted.push(true); resolve({ kind: 'cancelled' }); });
    }));
    relay.start();
    const s = sockets[0]!;
    s.open();
    expect(s.sent[0]).toEqual({ t: 'hello', v: 1, key: 'k'.repeat(40), models: [{ id: 'm', contextSize: 512 }] });
    s.frame({ t: 'ready' });
    expect(relay.status).toEqual({ kind: 'serving' });
    s.frame('not json');
    s.frame({ t: 'request', id: 'bad id!', kind: 'chat', body: {}, client: '' });
    s.frame({ t: 'launch' });
    expect(relay.refusedFrames).toBe(3);
    s.frame({ t: 'cancel', id: 'nobody' });
    s.frame(request('a'));
    s.frame(request('a'));                 // a repeated id: the first answers
    s.frame(request('b'));
    s.frame(request('c'));                 // past the bound of 2
    expect(relay.running).toBe(2);
    expect(s.sent.at(-1)).toMatchObject({ t: 'error', id: 'c', status: 429 });
    s.frame({ t: 'cancel', id: 'b' });
    pending[0]!();
    await tick();
    expect(aborted).toEqual([true]);
    expect(s.sent.filter((f) => f.t === 'done')).toEqual([{ t: 'done', id: 'a', response: { ok: true } }]);
    expect(s.sent.some((f) => f.id === 'b' && f.t !== 'request')).toBe(false);     // a cancelled request sends nothing
    s.frame({ t: 'ping' });
    expect(s.sent.at(-1)).toEqual({ t: 'pong' });
    relay.stop();
  });

  it('a dropped socket aborts what runs and is dialled again after 100, then 200 ms; a refused hello is not retried', async () => {
    vi.useFakeTimers();
    let aborts = 0;
    const { relay, sockets } = client((signal) => new Promise((resolve) => signal.addEventListener('abort', () => { aborts++; resolve({ kind: 'cancelled' }); })));
    relay.start();
    sockets[0]!.open();
    sockets[0]!.frame({ t: 'ready' });
    sockets[0]!.frame(request('a'));
    sockets[0]!.close();
    expect(aborts).toBe(1);
    expect(relay.status).toMatchObject({ kind: 'retrying', inMs: 100 });
    vi.advanceTimersByTime(99);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(2);
    sockets[1]!.close();                   // never opened: the wait doubles
    expect(relay.status).toMatchObject({ kind: 'retrying', inMs: 200 });
    vi.advanceTimersByTime(200);
    sockets[2]!.open();
    sockets[2]!.frame({ t: 'refused', why: 'the key is held by another tab' });
    expect(relay.status).toEqual({ kind: 'refused', why: 'the key is held by another tab' });
    vi.advanceTimersByTime(10_000);
    expect(sockets).toHaveLength(3);
    relay.stop();
  });
});
