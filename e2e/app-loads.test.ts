import { expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startServer } from '../server/app.ts';
import { artifactDir, newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';

const env = useServerAndBrowser();

test('the app page loads and names the WebGPU adapter it found', async () => {
  const context = await newDeviceContext(env.browser);
  const page = await context.newPage();
  await page.goto(env.server.url + '/');
  const adapter = page.getByTestId('adapter');
  await expect.poll(async () => (await adapter.count()) > 0, { timeout: 20_000 }).toBe(true);
  const text = await adapter.textContent();
  expect(text).toMatch(/WebGPU adapter: .*SwiftShader|WebGPU adapter: .+/);
  mkdirSync(artifactDir(), { recursive: true });
  await page.screenshot({ path: path.join(artifactDir(), 'app-loads.png') });
  await context.close();
});

test('a browser without WebGPU gets a clear message instead of a blank page', async () => {
  const context = await newDeviceContext(env.browser);
  await context.addInitScript("Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined })");
  const page = await context.newPage();
  await page.goto(env.server.url + '/');
  const err = page.getByTestId('adapter-error');
  await expect.poll(async () => (await err.count()) > 0, { timeout: 20_000 }).toBe(true);
  expect(await err.textContent()).toMatch(/no WebGPU/i);
  await context.close();
});

test('the server answers the deployment config (signaling, STUN/TURN) beside the app', async () => {
  expect(await (await fetch(env.server.url + '/pooled-config.json')).json()).toEqual({});
  const configured = await startServer({ port: 0, deployConfig: { signalUrl: 'https://signal.example.com/signal', iceServers: [{ urls: 'stun:stun.example.com' }] } });
  try {
    expect(await (await fetch(configured.url + '/pooled-config.json')).json()).toEqual({
      signalUrl: 'https://signal.example.com/signal', iceServers: [{ urls: 'stun:stun.example.com' }],
    });
  } finally {
    await configured.close();
  }
});

test('the embedded PeerJS signaling server answers on the same port', async () => {
  const res = await fetch(env.server.url + '/signal/peerjs/id');
  expect(res.status).toBe(200);
  expect((await res.text()).length).toBeGreaterThan(8);
});
