// Issue 29 acceptance 3: a mixed room in Chromium — a WebGPU host (SwiftShader here), a WASM guest and a
// reference guest, each its own browser context and its own ?engine= (harness/room.html) — gives the single
// device's greedy tokens (the host's WebGPU engine holding every layer, from scratch) and its seeded
// sampled ones, including a pinned checkpoint restored after a compaction (dense: the KV cut back on every
// device; tiny hybrid: the Gated DeltaNet snapshots restored on the WebGPU host and the WASM guest, whose
// layers hold them, and the KV cut on the reference guest's full-attention layer). Then the app's room panel names each device's
// engine (test-results/room-mixed-cards.png), the host's chosen by the measured probe.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';
import { ev, openRoomPage } from './helpers/room-page.ts';

const PROMPT = [9707, 11, 1879, 0, 3555, 374, 264, 1273, 315, 279, 2480, 13, 5209, 4486, 2087, 25, 220, 16, 11, 17, 11, 18, 11, 19];
const SYSTEM = PROMPT.slice(0, 10);                          // "system prompt + tools": the pinned checkpoint
const USER_A = [1234, 5678, ...PROMPT.slice(10)];             // not an extension of PROMPT: the pin is taken afresh
const SUMMARY = [40, 1079, 311, 1281, 264, 1273, 13, 2087];  // the compacted conversation after the system prompt
const HYBRID = { layers: 4, seed: 2, headDim: 64, intermediate: 256, hybrid: {} } as const;   // the golden dense hybrid

let app: BuiltApp;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir({ layers: 4 }), '/models/hybrid': await tinyModelDir(HYBRID) });
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await app?.close();
});

/** The WASM card on an isolated page: its worker's pool runs min(cores, 8) threads. */
/** The WASM card on an isolated page: the worker's pool of min(cores, 8) threads, and the SIMD build loaded. */
const cpuLabel = (cores: number, simd: 'SIMD' | 'relaxed SIMD'): string => { const n = Math.min(cores, 8); return `CPU · ${n} thread${n === 1 ? '' : 's'} · ${simd}`; };

interface Run { ids: number[]; error: string | null; stats: { promptReused: number; promptComputed: number } }

describe.each([['dense', '/models/tiny'], ['hybrid', '/models/hybrid']] as const)('a %s model in a WebGPU + WASM + reference room', (kind, model) => {
  let host: Page;
  const ids: Record<'cpu' | 'ref', string> = { cpu: '', ref: '' };
  const single = (prompt: number[], n: number) => ev<Run>(host, `window.__room.single(${JSON.stringify(prompt)}, ${n}, undefined, true)`);
  const generate = (prompt: number[], n: number, pinAt?: number) =>
    ev<Run>(host, `window.__room.generate(${JSON.stringify(prompt)}, ${n}, undefined, ${pinAt === undefined ? 'undefined' : pinAt})`);

  beforeAll(async () => {
    const open = async (url: string) => {
      const c = await newDeviceContext(app.browser);
      contexts.push(c);
      return openRoomPage(c, url);
    };
    host = await open(`${app.server.url}/harness/room.html?role=host&model=${model}&engine=webgpu&ctx=512&speed=1&auto=0`);
    const link = await ev<string>(host, 'window.__room.link');
    const cpu = await open(`${link}&engine=wasm&speed=1&name=CPU`);
    const ref = await open(`${link}&engine=reference&speed=1&name=Ref`);
    ids.cpu = await ev<string>(cpu, 'window.__room.deviceId');
    ids.ref = await ev<string>(ref, 'window.__room.deviceId');
    // (expect.poll only runs inside a test: a bounded wait by hand)
    for (const t0 = Date.now(); (await ev<unknown[]>(host, 'window.__room.devices()')).length < 3;) {
      if (Date.now() - t0 > 60_000) throw new Error('the two guests did not both join within 60 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    // Every engine holds layers: the host layer 0 (and embedding, head, sampling), WASM 1–2, reference 3.
    await ev(host, `window.__room.deal(${JSON.stringify([{ deviceId: 'host', range: [0, 1] }, { deviceId: ids.cpu, range: [1, 3] }, { deviceId: ids.ref, range: [3, 4] }])})`);
    await ev(host, 'window.__room.whenReady()');
  }, 240_000);

  test('each device says its engine; the split gives the single device\'s 32 greedy tokens', async () => {
    const engines = await ev<{ id: string; engine: string; label: string | null }[]>(host, 'window.__room.engines()');
    expect(engines.map((e) => e.engine)).toEqual(['webgpu', 'wasm', 'reference']);
    expect(engines[0]!.label).toMatch(/^WebGPU · /);
    // The harness page is cross-origin isolated: the WASM engine's worker runs the pool's min(cores, 8)
    // threads, and this Chromium validates relaxed SIMD, so the guest loads that build and says so.
    expect(engines[1]!.label).toBe(cpuLabel(await ev<number>(host, 'navigator.hardwareConcurrency'), 'relaxed SIMD'));
    expect(engines[2]!.label).toBe('reference (JS on the CPU)');
    const expected = await single(PROMPT, 32);
    expect(expected.error).toBeNull();
    expect(expected.ids).toHaveLength(32);
    const r = await generate(PROMPT, 32);
    expect(r.error).toBeNull();
    expect(r.ids).toEqual(expected.ids);
  }, 300_000);

  test('a sampled answer (T 0.7, top-p 0.8, top-k 20, a seed) gives the single device\'s sampled tokens', async () => {
    const sampling = JSON.stringify({ temperature: 0.7, topP: 0.8, topK: 20, seed: 99 });
    const alone = await ev<Run>(host, `window.__room.single(${JSON.stringify(PROMPT)}, 16, ${sampling}, true)`);
    expect(alone.error).toBeNull();
    expect(alone.ids).toHaveLength(16);
    const r = await ev<Run>(host, `window.__room.generate(${JSON.stringify(PROMPT)}, 16, ${sampling})`);
    expect(r.error).toBeNull();
    expect(r.ids).toEqual(alone.ids);
  }, 300_000);

  test(`the pinned checkpoint after the system prompt is restored after a compaction (${kind === 'hybrid' ? 'recurrent-state snapshots restored on the WebGPU host and the WASM guest' : 'the KV cut back on every engine'})`, async () => {
    const first = await generate([...SYSTEM, ...USER_A], 8, SYSTEM.length);
    expect(first.stats.promptReused).toBeLessThanOrEqual(SYSTEM.length);
    expect(first.error).toBeNull();
    expect(first.ids).toEqual((await single([...SYSTEM, ...USER_A], 8)).ids);
    // The conversation is compacted: the system prompt stays, a summary replaces the rest.
    const after = await generate([...SYSTEM, ...SUMMARY], 8, SYSTEM.length);
    expect(after.error).toBeNull();
    expect(after.stats).toMatchObject({ promptReused: SYSTEM.length, promptComputed: SUMMARY.length });
    expect(after.ids).toEqual((await single([...SYSTEM, ...SUMMARY], 8)).ids);
    if (kind === 'hybrid') {
      // The Gated DeltaNet layers kept snapshots (the pin and the answer checkpoint) on the WebGPU host
      // and the WASM guest; the reference guest's layer 3 is full attention (a KV cut, no snapshot).
      const snaps = await ev<number[]>(host, 'window.__room.devices().map((d) => d.snapshots)');
      expect(snaps[0]).toBeGreaterThan(0);
      expect(snaps[1]).toBeGreaterThan(0);
    }
  }, 300_000);
});

test('the app\'s room panel names each device\'s engine: the host\'s from the probe, a forced WASM guest on ?simd=plain and a reference guest', async () => {
  mkdirSync(artifactDir(), { recursive: true });
  const hostContext = await newDeviceContext(app.browser);
  contexts.push(hostContext);
  const host = await hostContext.newPage();
  await host.goto(`${app.server.url}/?name=Laptop`);                 // no ?engine=: the probe chooses
  await host.getByTestId('host-room').click();
  const invite = host.getByTestId('invite-link');
  await invite.waitFor({ timeout: 120_000 });
  const link = await invite.inputValue();
  for (const [engine, name] of [['wasm', 'Old laptop'], ['reference', 'Phone']] as const) {
    const c = await newDeviceContext(app.browser, { width: 390, height: 844 });
    contexts.push(c);
    // the WASM guest forces the plain SIMD128 build (?simd=plain), and its card says so
    await (await c.newPage()).goto(`${link}&engine=${engine}${engine === 'wasm' ? '&simd=plain' : ''}&name=${encodeURIComponent(name)}&speed=1`);
  }
  const cards = host.getByTestId('device-engine');
  await expect.poll(() => cards.count(), { timeout: 120_000 }).toBe(3);
  const texts = await cards.allTextContents();
  const kinds = await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-engine')));
  await host.screenshot({ path: path.join(artifactDir(), 'room-mixed-cards.png'), fullPage: true });
  console.log(`[room-mixed] cards: ${JSON.stringify(texts)}`);
  // The host's probe chose WebGPU (SwiftShader) or the WASM engine, whichever measured faster here.
  expect(['webgpu', 'wasm']).toContain(kinds[0]);
  const cores = await ev<number>(host, 'navigator.hardwareConcurrency');
  if (kinds[0] === 'webgpu') expect(texts[0]).toMatch(/^WebGPU · /);
  else expect(texts[0]).toBe(cpuLabel(cores, 'relaxed SIMD'));
  expect(texts.slice(1)).toEqual([cpuLabel(cores, 'SIMD'), 'reference (JS on the CPU)']);
  expect(kinds.slice(1)).toEqual(['wasm', 'reference']);
}, 300_000);
