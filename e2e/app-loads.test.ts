import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type RunningServer } from '../server/app.ts';
import { artifactDir, launchChromium, newDeviceContext } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer({ port: 0 });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('the app page loads and names the WebGPU adapter it found', async () => {
  const context = await newDeviceContext(browser);
  const page = await context.newPage();
  await page.goto(server.url + '/');
  const adapter = page.getByTestId('adapter');
  await expect.poll(async () => (await adapter.count()) > 0, { timeout: 20_000 }).toBe(true);
  const text = await adapter.textContent();
  expect(text).toMatch(/WebGPU adapter: .*SwiftShader|WebGPU adapter: .+/);
  mkdirSync(artifactDir(), { recursive: true });
  await page.screenshot({ path: path.join(artifactDir(), 'app-loads.png') });
  await context.close();
});

test('a browser without WebGPU gets a clear message instead of a blank page', async () => {
  const context = await newDeviceContext(browser);
  await context.addInitScript("Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined })");
  const page = await context.newPage();
  await page.goto(server.url + '/');
  const err = page.getByTestId('adapter-error');
  await expect.poll(async () => (await err.count()) > 0, { timeout: 20_000 }).toBe(true);
  expect(await err.textContent()).toMatch(/no WebGPU/i);
  await context.close();
});

test('the server answers the deployment config (signaling, STUN/TURN) beside the app', async () => {
  expect(await (await fetch(server.url + '/pooled-config.json')).json()).toEqual({});
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
  const res = await fetch(server.url + '/signal/peerjs/id');
  expect(res.status).toBe(200);
  expect((await res.text()).length).toBeGreaterThan(8);
});
