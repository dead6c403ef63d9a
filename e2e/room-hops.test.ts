// Issue 15 item 1 / acceptance 3 in real Chromium: direct hops between guest tabs over loopback WebRTC
// (our PeerJS server; each tab its own browser context, i.e. its own device). A host and three guests in
// one chain, host → A → B → C → host: the tokens of one device, the rows passed guest to guest (each
// guest's counters), then the middle guest's tab is closed mid-generation: noticed within 2 s, the
// request stopped naming it, and after the re-deal the chain A → C gives the same tokens again.
// Drives harness/room.html through window.__room.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServer, type RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { launchChromium, newDeviceContext } from './helpers/browser.ts';
import { ev, openRoomPage } from './helpers/room-page.ts';

// The transport is what this file tests: the CPU reference engine on every device keeps four tabs
// affordable on a small machine (e2e/room.test.ts runs the WebGPU kernels split across tabs).
// Override with ROOM_E2E_HOST_ENGINE / ROOM_E2E_GUEST_ENGINE = webgpu | reference.
const HOST_ENGINE = process.env.ROOM_E2E_HOST_ENGINE ?? 'reference';
const ENGINE = process.env.ROOM_E2E_GUEST_ENGINE ?? 'reference';
const PROMPT = [9707, 11, 1879, 0, 3555, 374, 264, 1273, 315, 279, 2480, 13, 5209, 4486, 2087, 25, 220, 16, 11, 17, 11, 18, 11, 19];
const N = 32;

interface Stats { forwards: number; hopsOut: number; resultsOut: number }
interface Guest { context: BrowserContext; page: Page; id: string; name: string }

let server: RunningServer;
let browser: Browser;
let hostPage: Page;
let link: string;
let expected: number[];
const guests: Guest[] = [];

const openPage = openRoomPage;

async function addGuest(name: string): Promise<Guest> {
  const context = await newDeviceContext(browser);
  const page = await openPage(context, `${link}&engine=${ENGINE}&speed=1&name=${name}`);
  const g = { context, page, id: await ev<string>(page, 'window.__room.deviceId'), name };
  guests.push(g);
  return g;
}

const devices = () => ev<{ id: string; status: string }[]>(hostPage, 'window.__room.devices()');
const chains = () => ev<string[][]>(hostPage, 'window.__room.chains()');
const stats = (g: Guest) => ev<Stats>(g.page, 'window.__room.state().stats');
const deal = (entries: [string, [number, number]][]) =>
  ev<void>(hostPage, `window.__room.deal(${JSON.stringify(entries.map(([deviceId, range]) => ({ deviceId, range })))})`);
const generate = (n = N) => ev<{ ids: number[]; finish: string; note: string | null; endedAt: number; stats: { promptComputed: number } }>(
  hostPage, `window.__room.generate(${JSON.stringify(PROMPT)}, ${n})`);

beforeAll(async () => {
  const modelDir = await tinyModelDir({ layers: 4 });
  server = await startServer({ port: 0, extraStatic: { '/models/tiny': modelDir } });
  browser = await launchChromium();
  hostPage = await openPage(await newDeviceContext(browser), `${server.url}/harness/room.html?role=host&model=/models/tiny&engine=${HOST_ENGINE}&ctx=2048&speed=1&auto=0`);
  link = await ev<string>(hostPage, 'window.__room.link');
  expected = (await ev<{ ids: number[] }>(hostPage, `window.__room.single(${JSON.stringify(PROMPT)}, ${N})`)).ids;
  expect(expected.length).toBe(N);
  expect(new Set(expected).size).toBeGreaterThan(4);
});
afterAll(async () => {
  if (hostPage) {
    const events = await ev<unknown[]>(hostPage, 'window.__room.events').catch(() => []);
    console.log(`[room-hops e2e] host events: ${JSON.stringify(events).slice(0, 3000)}`);
  }
  await browser?.close();
  await server?.close();
});

test('a chain of three guests over direct WebRTC channels: the tokens of one device, rows passed guest to guest', async () => {
  const [a, b, c] = [await addGuest('A'), await addGuest('B'), await addGuest('C')];
  await expect.poll(async () => (await devices()).length, { timeout: 30_000 }).toBe(4);
  await deal([['host', [0, 1]], [a.id, [1, 2]], [b.id, [2, 3]], [c.id, [3, 4]]]);
  expect(await chains()).toEqual([[a.id, b.id, c.id]]);
  const before = await Promise.all([a, b, c].map(stats));
  const r = await generate();
  expect(r.finish).toBe('cap');
  expect(r.ids).toEqual(expected);
  const after = await Promise.all([a, b, c].map(stats));
  const delta = after.map((s, i) => ({ forwards: s.forwards - before[i]!.forwards, hopsOut: s.hopsOut - before[i]!.hopsOut, resultsOut: s.resultsOut - before[i]!.resultsOut }));
  // Every request went host → A → B → C → host: A and B passed each on to their neighbour, only C answered the host.
  const requests = delta[0]!.forwards;
  expect(requests).toBeGreaterThanOrEqual(N - 1);
  expect(delta).toEqual([
    { forwards: requests, hopsOut: requests, resultsOut: 0 },
    { forwards: requests, hopsOut: requests, resultsOut: 0 },
    { forwards: requests, hopsOut: 0, resultsOut: requests },
  ]);
});

test('the middle guest\'s tab closed mid-generation: noticed within 2 s, stopped naming it; re-dealt, the chain re-wired, same tokens', async () => {
  const [a, b, c] = guests as [Guest, Guest, Guest];
  const running = generate(1500);
  await expect.poll(async () => (await stats(c)).resultsOut, { timeout: 20_000 }).toBeGreaterThan(40); // well into decoding
  const closedAt = await ev<number>(hostPage, 'performance.now()');
  await b.page.close();
  const r = await running;
  expect(r.finish).toBe('stopped');
  expect(r.note).toMatch(/device "B" left the room/);
  const left = await ev<{ detectedAt: number; why: string }>(hostPage, `window.__room.events.find((e) => e.type === 'left' && e.id === '${b.id}')`);
  const noticedMs = left.detectedAt - closedAt;
  console.log(`[room-hops e2e] middle guest closed: noticed in ${noticedMs.toFixed(0)} ms (${left.why}), stopped ${(r.endedAt - left.detectedAt).toFixed(0)} ms later: ${r.note}`);
  expect(noticedMs).toBeLessThan(2000);
  expect(r.endedAt - left.detectedAt).toBeLessThan(1000);
  expect((await devices()).map((d) => d.id)).toEqual(['host', a.id, c.id]);
  await deal([['host', [0, 1]], [a.id, [1, 3]], [c.id, [3, 4]]]);
  expect(await chains()).toEqual([[a.id, c.id]]);
  const before = await stats(a);
  const again = await generate();
  expect(again.ids).toEqual(expected);
  expect(again.stats.promptComputed).toBe(PROMPT.length);
  const after = await stats(a);
  expect(after.hopsOut - before.hopsOut).toBe(after.forwards - before.forwards); // A now passes straight to C
  expect(after.resultsOut).toBe(before.resultsOut);
});

test('the middle guest\'s renderer killed (no goodbye at all): noticed within 2 s, named; re-dealt, same tokens', async () => {
  const [a, , c] = guests as [Guest, Guest, Guest];
  const d = await addGuest('D');
  await expect.poll(async () => (await devices()).length, { timeout: 30_000 }).toBe(4);
  await deal([['host', [0, 1]], [a.id, [1, 2]], [d.id, [2, 3]], [c.id, [3, 4]]]);
  expect(await chains()).toEqual([[a.id, d.id, c.id]]);
  const running = generate(1500);
  const cBefore = (await stats(c)).resultsOut;
  await expect.poll(async () => (await stats(c)).resultsOut - cBefore, { timeout: 20_000 }).toBeGreaterThan(40);
  const cdp = await d.context.newCDPSession(d.page);
  const killedAt = await ev<number>(hostPage, 'performance.now()');
  void cdp.send('Page.crash').catch(() => undefined); // the renderer dies: no pagehide, no goodbye (the call never answers)
  const r = await running;
  expect(r.finish).toBe('stopped');
  expect(r.note).toMatch(/device "D" left the room/);
  const left = await ev<{ detectedAt: number; why: string }>(hostPage, `window.__room.events.find((e) => e.type === 'left' && e.id === '${d.id}')`);
  const noticedMs = left.detectedAt - killedAt;
  console.log(`[room-hops e2e] middle guest killed: noticed in ${noticedMs.toFixed(0)} ms (${left.why}): ${r.note}`);
  expect(noticedMs).toBeLessThan(2000);
  await deal([['host', [0, 1]], [a.id, [1, 3]], [c.id, [3, 4]]]);
  expect(await chains()).toEqual([[a.id, c.id]]);
  expect((await generate()).ids).toEqual(expected);
});
