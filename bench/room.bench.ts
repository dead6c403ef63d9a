// Room figures on loopback WebRTC, driving real Chromium from Node (harness/room.html): a host tab and a
// guest tab (separate contexts), both on the CPU reference engine by default (ROOM_BENCH_ENGINE sets the
// host's, ROOM_BENCH_GUEST_ENGINE the guest's: webgpu | reference; a 151,936-row head on SwiftShader is
// slow), the 4-layer tiny checkpoint.
//   - data-channel round trip of a heartbeat frame (median, p95)
//   - decode tok/s of a 2-way split over single-device decode tok/s, same page, same run
//   - prefill tok/s with pipelined micro-chunks vs the whole batch per device
import path from 'node:path';
import { build } from 'vite';
import { startServer } from '../server/app.ts';
import { launchChromium, newDeviceContext } from '../e2e/helpers/browser.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';

export const title = 'room: loopback WebRTC between two Chromium tabs (tiny model)';

const ENGINE = process.env.ROOM_BENCH_ENGINE ?? 'reference';            // host (embedding, head, its layers)
const GUEST_ENGINE = process.env.ROOM_BENCH_GUEST_ENGINE ?? ENGINE;     // guest layers
const quantile = (xs: number[], q: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]!; };

export async function run(): Promise<Record<string, number | string>> {
  const t0 = Date.now();
  const step = (what: string) => console.log(`  [room bench] ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  // Our own build folder: a shared dist/ may be rebuilt by another process while we run.
  const root = path.resolve('.cache/room-bench');
  await build({ logLevel: 'warn', build: { outDir: path.join(root, 'dist'), emptyOutDir: true } });
  const modelDir = await tinyModelDir({ layers: 4 });
  const server = await startServer({ port: 0, root, extraStatic: { '/models/tiny': modelDir } });
  const browser = await launchChromium();
  try {
    const open = async (url: string) => {
      const page = await (await newDeviceContext(browser)).newPage();
      await page.goto(url);
      await page.waitForFunction('window.__room && (window.__room.failed || window.__room.events)', null, { timeout: 120_000, polling: 200 });
      const failed = await page.evaluate('window.__room.failed');
      if (failed) throw new Error(String(failed));
      return page;
    };
    const host = await open(`${server.url}/harness/room.html?role=host&model=/models/tiny&engine=${ENGINE}&ctx=1024&speed=1&auto=0`);
    step('host up');
    const link = (await host.evaluate('window.__room.link')) as string;
    const guest = await open(`${link}&engine=${GUEST_ENGINE}&speed=1&name=bench`);
    const guestId = (await guest.evaluate('window.__room.deviceId')) as string;
    step('guest up');
    await host.waitForFunction('window.__room.devices().length === 2', null, { timeout: 60_000, polling: 200 });
    step('guest joined');
    await host.evaluate(`window.__room.deal([{deviceId: 'host', range: [0, 2]}, {deviceId: '${guestId}', range: [2, 4]}])`);

    step('dealt');
    await host.evaluate(`window.__room.ping('${guestId}', 20)`); // warm-up
    const rtts = (await host.evaluate(`window.__room.ping('${guestId}', 200)`)) as number[];

    step('pinged');
    const prompt = Array.from({ length: 24 }, (_, i) => 1000 + ((i * 7919) % 5000));
    type Gen = { ids: number[]; stats: { decodeTokensPerSecond: number; prefillTokensPerSecond: number; promptComputed: number } };
    // Warm both paths first (JIT, first-use allocations) with another prompt, so neither pays for it below.
    await host.evaluate(`window.__room.single([5, 6, 7], 8)`);
    await host.evaluate(`window.__room.generate([5, 6, 7], 8)`);
    const single = (await host.evaluate(`window.__room.single(${JSON.stringify(prompt)}, 32)`)) as Gen;
    const split = (await host.evaluate(`window.__room.generate(${JSON.stringify(prompt)}, 32)`)) as Gen;
    if (JSON.stringify(single.ids) !== JSON.stringify(split.ids)) throw new Error('split tokens differ from single-device tokens');

    step('decoded');
    // Prefill: 256 fresh tokens (a new first token each run, so nothing is reused), 1 answer token.
    const long = (first: number) => [first, ...Array.from({ length: 255 }, (_, i) => 2000 + ((i * 104729) % 9000))];
    await host.evaluate('window.__room.setMicroChunk(16)');
    const piped = (await host.evaluate(`window.__room.generate(${JSON.stringify(long(11))}, 1)`)) as Gen;
    await host.evaluate('window.__room.setMicroChunk(0)');
    const whole = (await host.evaluate(`window.__room.generate(${JSON.stringify(long(12))}, 1)`)) as Gen;
    if (piped.stats.promptComputed !== 256 || whole.stats.promptComputed !== 256) throw new Error('prefill reused cached tokens');

    return {
      engine: `host ${ENGINE}, guest ${GUEST_ENGINE}`,
      'heartbeat round trip median ms': quantile(rtts, 0.5),
      'heartbeat round trip p95 ms': quantile(rtts, 0.95),
      'single-device decode tok/s': single.stats.decodeTokensPerSecond,
      '2-way split decode tok/s': split.stats.decodeTokensPerSecond,
      'split / single decode': split.stats.decodeTokensPerSecond / single.stats.decodeTokensPerSecond,
      'prefill tok/s pipelined (micro-chunk 16)': piped.stats.prefillTokensPerSecond,
      'prefill tok/s unpipelined': whole.stats.prefillTokensPerSecond,
      'pipelined / unpipelined prefill': piped.stats.prefillTokensPerSecond / whole.stats.prefillTokensPerSecond,
    };
  } finally {
    await browser.close();
    await server.close();
  }
}
