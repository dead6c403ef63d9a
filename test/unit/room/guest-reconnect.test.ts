// The guest's reconnect state machine (src/room/guest-reconnect.ts) on a clock of the test's own: a host
// lost without a goodbye → reconnecting with a growing wait → rejoined; a goodbye → closed, no attempt;
// no host within the bound → gave-up; leave → stopped.
import { describe, expect, test } from 'vitest';
import { HostReconnect, RECONNECT_LIMITS, type ReconnectClock, type ReconnectState } from '../../../src/room/guest-reconnect.ts';

/** A clock whose waits pass at once, moving its time on by the wait (plus `perAttemptMs` per attempt). */
function fakeClock(): ReconnectClock & { t: number; waits: number[] } {
  const c = { t: 0, waits: [] as number[], now: () => c.t, wait: async (ms: number) => { c.waits.push(ms); c.t += ms; } };
  return c;
}

/** A machine whose attempts fail `failures` times, then succeed (Infinity: never). */
function machine(failures: number, clock = fakeClock()) {
  const states: ReconnectState[] = [];
  let attempts = 0;
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((r) => { settle = r; });
  const m = new HostReconnect({
    clock,
    connect: async () => {
      attempts++;
      clock.t += 100;   // an attempt takes a while (the signaling server answers "peer-unavailable")
      if (attempts <= failures) throw Object.assign(new Error('room 01234567… is not open (its host is gone)'), { name: 'JoinError' });
    },
    onState: (s) => { states.push(s); if (s.kind !== 'reconnecting') settle(); },
  });
  return { m, states, clock, attempts: () => attempts, settled };
}

describe('guest reconnect', () => {
  test('no goodbye → reconnecting → rejoined, with a doubling wait between attempts', async () => {
    const { m, states, clock, attempts, settled } = machine(4);
    m.hostLost('connection closed: the data channel closed');
    await settled;
    expect(m.state).toEqual({ kind: 'connected', rejoined: 1 });
    expect(attempts()).toBe(5);
    expect(clock.waits).toEqual([500, 1000, 2000, 4000]);
    expect(states.filter((s) => s.kind === 'reconnecting').map((s) => (s as { attempt: number }).attempt)).toEqual([0, 1, 2, 3, 4, 5]);
    const last = states.at(-2) as Extract<ReconnectState, { kind: 'reconnecting' }>;
    expect(last.lastError).toMatch(/^JoinError: .*not open/);
  });

  test('the wait stops growing at the cap', async () => {
    const { m, clock, settled } = machine(8);
    m.hostLost('gone');
    await settled;
    expect(clock.waits).toEqual([500, 1000, 2000, 4000, 5000, 5000, 5000, 5000]);
  });

  test('a goodbye "closed the room" is final: closed, no attempt', async () => {
    const { m, attempts } = machine(0);
    m.goodbye('the host closed the room');
    expect(m.state).toEqual({ kind: 'closed', reason: 'the host closed the room' });
    m.hostLost('connection closed');   // the channel closing after the goodbye changes nothing
    await Promise.resolve();
    expect(attempts()).toBe(0);
    expect(m.state.kind).toBe('closed');
  });

  test('a goodbye while reconnecting ends the attempts', async () => {
    const clock = fakeClock();
    const { m, attempts } = machine(Infinity, clock);
    let release: () => void = () => undefined;
    clock.wait = (ms) => { clock.waits.push(ms); clock.t += ms; return new Promise((r) => { release = r; }); };
    m.hostLost('gone');
    await new Promise((r) => setTimeout(r, 0));
    expect(m.state.kind).toBe('reconnecting');
    m.goodbye('removed by the host');
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(m.state).toEqual({ kind: 'closed', reason: 'removed by the host' });
    expect(attempts()).toBe(1);
  });

  test('gives up once the bound has passed since the loss', async () => {
    const { m, states, clock, attempts, settled } = machine(Infinity);
    m.hostLost('gone');
    await settled;
    const end = m.state as Extract<ReconnectState, { kind: 'gave-up' }>;
    expect(end.kind).toBe('gave-up');
    expect(end.attempts).toBe(attempts());
    expect(end.lastError).toMatch(/not open/);
    // Never waited past the bound, and stopped within one wait of it.
    expect(clock.t).toBeLessThanOrEqual(RECONNECT_LIMITS.giveUpMs + 100);
    expect(clock.t).toBeGreaterThan(RECONNECT_LIMITS.giveUpMs - RECONNECT_LIMITS.maxDelayMs - 200);
    expect(states.at(-1)).toBe(end);
  });

  test('a second loss after a rejoin starts again and counts the rejoins', async () => {
    const { m, settled } = machine(0);
    m.hostLost('first');
    await settled;
    expect(m.state).toEqual({ kind: 'connected', rejoined: 1 });
    const again = new Promise<void>((r) => { const iv = setInterval(() => { if (m.state.kind === 'connected' && m.state.rejoined === 2) { clearInterval(iv); r(); } }, 1); });
    m.hostLost('second');
    await again;
    expect(m.state).toEqual({ kind: 'connected', rejoined: 2 });
  });

  test('leave stops it', async () => {
    const { m } = machine(Infinity);
    m.hostLost('gone');
    m.stop();
    await new Promise((r) => setTimeout(r, 0));
    expect(m.state).toEqual({ kind: 'stopped' });
  });
});
