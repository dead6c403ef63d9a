// Headless Debian Chromium with WebGPU (SwiftShader here) and WebRTC kept on 127.0.0.1.
// See docs/platform.md (WebGPU in Chromium, WebRTC between tabs): the flags, and why ICE candidates are
// filtered to loopback.
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startServer, type RunningServer, type ServerOptionsIn } from '../../server/app.ts';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../../src/preview/chromium.ts';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export { CHROMIUM_PATH };

/**
 * The tests' own pages (our app, its fixtures) run without Chromium's sandbox, as before; pages a model
 * wrote run in it (launchSandboxedChromium in src/preview/chromium.ts: the headless preview, the eval).
 */
export const CHROMIUM_ARGS = [...CHROMIUM_FLAGS, '--no-sandbox'];

/** Drops every ICE candidate not on 127.0.0.1, in both directions, so no traffic leaves loopback. */
export const LOOPBACK_ICE_SCRIPT = `(() => {
  const onLoopback = (c) => !c || !c.candidate || / 127\\.0\\.0\\.1 /.test(c.candidate);
  const P = RTCPeerConnection.prototype;
  const add = P.addIceCandidate;
  P.addIceCandidate = function (c, ...rest) { return onLoopback(c) ? add.call(this, c, ...rest) : Promise.resolve(); };
  const desc = Object.getOwnPropertyDescriptor(P, 'onicecandidate');
  Object.defineProperty(P, 'onicecandidate', {
    configurable: true,
    get() { return desc.get.call(this); },
    set(fn) { desc.set.call(this, fn && ((e) => { if (onLoopback(e.candidate)) fn.call(this, e); })); },
  });
  const addEL = P.addEventListener;
  P.addEventListener = function (type, fn, ...rest) {
    if (type === 'icecandidate' && typeof fn === 'function') {
      const inner = fn; fn = (e) => { if (onLoopback(e.candidate)) inner.call(this, e); };
    }
    return addEL.call(this, type, fn, ...rest);
  };
})();`;

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** A fresh context (its own storage: a separate "device") with WebRTC on loopback. */
export async function newDeviceContext(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, permissions: ['camera', 'microphone'] });
  await context.addInitScript(LOOPBACK_ICE_SCRIPT);
  return context;
}

/** Folder for screenshots and other artifacts a person looks at (kept after the run, gitignored). */
export function artifactDir(): string {
  const dir = path.resolve('test-results');
  return dir;
}

export function tempProfile(): string {
  return mkdtempSync(path.join(tmpdir(), 'pooled-chromium-'));
}

/**
 * The usual e2e file setup: our server on a free port and one Chromium, started before the file's tests
 * and closed after them. Read `env.server` / `env.browser` inside tests (they exist once beforeAll ran).
 */
export function useServerAndBrowser(serverOptions: ServerOptionsIn = { port: 0 }): { server: RunningServer; browser: Browser } {
  const env = {} as { server: RunningServer; browser: Browser };
  beforeAll(async () => {
    env.server = await startServer(serverOptions);
    env.browser = await launchChromium();
  });
  afterAll(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  return env;
}

/** The built app served from a private copy of dist/ (other test runs may rebuild dist/ meanwhile), and one Chromium. */
export interface BuiltApp { server: RunningServer; browser: Browser; close(): Promise<void> }

/** Start a BuiltApp with `extraStatic` folders (tiny models, scripts) beside it; close() removes the copy. */
export async function startBuiltApp(extraStatic: Record<string, string>): Promise<BuiltApp> {
  const root = mkdtempSync(path.join(tmpdir(), 'pooled-app-'));
  const gone = () => rmSync(root, { recursive: true, force: true });
  let server: RunningServer | undefined;
  try {
    cpSync(path.resolve('dist'), path.join(root, 'dist'), { recursive: true });
    server = await startServer({ port: 0, root, extraStatic });
    const browser = await launchChromium();
    const running = server;
    return { server, browser, async close() { await browser.close(); await running.close(); gone(); } };
  } catch (e) {
    await server?.close();
    gone();
    throw e;
  }
}
