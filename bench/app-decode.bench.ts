// Where a decode token's time goes in the app: the built-in tiny model (4 layers, hidden 64, the full
// 151,936-row Qwen3 head) in the engine's Web Worker in real Chromium (SwiftShader here), driven through
// harness/engine.html?profile. Milliseconds per token (medians) for the round trip alone, the layers, the
// head with each pick, the fused decodeToken as the agent calls it (top-20 under the call grammar's mask,
// with the overrule check), the CPU reference engine in the page, and the head's top-k layouts side by side
// in one page (the adapter's choice against the GPU layout), timed in turn. Then the app itself: one
// request on the tiny model (it answers up to its 256-token cap) on each engine, the summary's tok/s
// (which counts the prefill of the ≈ 1,000-token opening too).
import path from 'node:path';
import { build } from 'vite';
import { startServer } from '../server/app.ts';
import { launchChromium, newDeviceContext } from '../e2e/helpers/browser.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';

export const title = 'app decode: the tiny model in the engine worker in Chromium, per token (ms)';

export async function run(): Promise<Record<string, number | string>> {
  // Our own build folder: a shared dist/ may be rebuilt by another process while we run.
  const root = path.resolve('.cache/app-decode-bench');
  await build({ logLevel: 'warn', build: { outDir: path.join(root, 'dist'), emptyOutDir: true } });
  const server = await startServer({ port: 0, root, extraStatic: { '/models/tiny': await tinyModelDir({ layers: 4 }) } });
  const browser = await launchChromium();
  try {
    const page = await (await newDeviceContext(browser)).newPage();
    await page.goto(`${server.url}/harness/engine.html?model=/models/tiny&tokens=8&ctx=256&profile=${Number(process.env.APP_DECODE_STEPS ?? 9)}&compare=128x8`);
    await page.waitForFunction('window.__engine.state !== "loading"', null, { timeout: 600_000, polling: 500 });
    const r = (await page.evaluate('window.__engine')) as { state: string; message?: string; profile: Record<string, number>; stats: { kernels: string }; adapter: { architecture: string } };
    if (r.state !== 'done') throw new Error(`the engine harness failed: ${r.message}`);
    const p = r.profile;
    const out: Record<string, number | string> = { adapter: r.adapter.architecture, kernels: r.stats.kernels, ...p };
    const agentKeys = Object.keys(p).filter((k) => k.startsWith('decodeToken as the agent, top-k'));
    const greedyKeys = Object.keys(p).filter((k) => k.startsWith('decodeToken greedy, top-k'));
    if (agentKeys.length === 2) out['agent decode: GPU top-k layout / adapter\'s layout'] = p[agentKeys[1]!]! / p[agentKeys[0]!]!;
    if (greedyKeys.length === 2) out['greedy decode: GPU top-k layout / adapter\'s layout'] = p[greedyKeys[1]!]! / p[greedyKeys[0]!]!;
    out['agent decode: WebGPU / CPU reference'] = p['decodeToken as the agent (top-20, mask, overrule check)']! / p['CPU reference decodeToken as the agent']!;
    await page.context().close();
    const app: Record<string, number> = {};
    for (const engine of ['webgpu', 'reference']) {
      const tab = await (await newDeviceContext(browser)).newPage();
      await tab.goto(`${server.url}/?engine=${engine}&name=Laptop&speed=1`);
      await tab.getByTestId('adapter').waitFor({ timeout: 60_000 });
      await tab.getByTestId('host-room').click();
      await tab.getByTestId('request-input').waitFor({ timeout: 180_000 });
      await tab.getByTestId('request-input').fill('Build a todo list with local storage');
      await tab.getByTestId('send').click({ timeout: 180_000 });
      await tab.getByTestId('tl-summary').waitFor({ timeout: 600_000 });
      const summary = (await tab.getByTestId('tl-summary').textContent()) ?? '';
      app[engine] = Number(/([\d.]+) tok\/s/.exec(summary)?.[1] ?? NaN);
      out[`app, one request on ${engine}: summary`] = summary;
      await tab.context().close();
    }
    out['app tok/s: WebGPU / CPU reference'] = app.webgpu! / app.reference!;
    return out;
  } finally {
    await browser.close();
    await server.close();
  }
}
