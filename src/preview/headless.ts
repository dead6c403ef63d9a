// The preview for Node (the agent CLI): the same three tools, by driving headless Chromium. It starts
// the app's server (server/app.ts, which serves the built harness pages), opens harness/preview.html
// with ?files=node, and answers the page's file reads from a ProjectFiles here (a folder on disk).
// Needs the built app (`npm run build`) and Chromium (docs/platform.md, WebGPU in Chromium and Chromium's sandbox).
// The pages it serves are a model's: Chromium runs with its sandbox on (chromium.ts), and every call has a
// deadline kept here in Node (a page stuck in a loop can stall the tab, and page.evaluate has no timeout).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ProjectFiles } from '../agent/files/types.ts';
import { confineToOrigin, launchSandboxedChromium } from './chromium.ts';
import { startServer, type RunningServer } from '../../server/app.ts';
import { PreviewError, type LogsResult, type PreviewApi, type RestorablePort, type RunJsResult, type ServeResult, type ServedPage } from './types.ts';

export interface HeadlessPreviewOptions {
  files: ProjectFiles;
  /** the pooled checkout (where dist/ is); default: the current folder */
  appRoot?: string;
  /** a running app server to use instead of starting one */
  appUrl?: string;
  viewport?: { width: number; height: number };
}

/** Thrown when Chromium or the built harness is not there: the message says what to run. */
export class HeadlessPreviewError extends Error {
  override name = 'HeadlessPreviewError';
}

/**
 * How long one call may take before the preview counts as stuck: well past the slowest honest call
 * (run_js's 3 s limit + 10 s for its page to come back + a recycle; serve's 2 s load wait after esbuild's
 * first start, seconds on a busy 2-core machine).
 */
export const HEADLESS_CALL_MS = 60_000;

export class HeadlessPreview implements PreviewApi {
  private constructor(
    private page: Page, private readonly context: BrowserContext, private readonly browser: Browser,
    private readonly harnessUrl: string, private readonly files: ProjectFiles, private readonly server?: RunningServer,
  ) {}

  /** How long one call may take (HEADLESS_CALL_MS; tests shorten it). */
  callMs = HEADLESS_CALL_MS;
  /** A fresh harness tab being opened after a stuck one (calls wait for it). */
  private reopening: Promise<void> = Promise.resolve();

  static async start(opts: HeadlessPreviewOptions): Promise<HeadlessPreview> {
    let server: RunningServer | undefined;
    let browser: Browser | undefined;
    try {
      if (!opts.appUrl) server = await startServer({ port: 0, root: opts.appRoot });
      browser = await launchSandboxedChromium().catch((e: Error) => {
        throw new HeadlessPreviewError(`could not start Chromium for the preview: ${e.message}`);
      });
      const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1024, height: 768 } });
      const appUrl = opts.appUrl ?? server!.url;
      // The served pages (sandboxed frames in the harness) reach nothing but the app's own server.
      await confineToOrigin(context, appUrl);
      const harnessUrl = `${appUrl}/harness/preview.html?files=node`;
      const page = await openHarness(context, harnessUrl, opts.files);
      return new HeadlessPreview(page, context, browser, harnessUrl, opts.files, server);
    } catch (e) {
      await browser?.close();
      await server?.close();
      if (e instanceof Error && /No built app/.test(e.message)) throw new HeadlessPreviewError(e.message);
      throw e;
    }
  }

  serve(folder = ''): Promise<ServeResult> {
    return this.call('serve', [folder]);
  }
  logs(cursor = 0): Promise<LogsResult> {
    return this.call('logs', [cursor]);
  }
  runJs(code: string, port?: number): Promise<RunJsResult> {
    return this.call('runJs', port === undefined ? [code] : [code, port]);
  }
  served(): Promise<ServedPage[]> {
    return this.call('served', []);
  }
  restore(ports: RestorablePort[]): Promise<void> {
    return this.call('restore', [ports]);
  }

  /** A PNG of the preview pane (page and console), for a person or a test to look at. */
  screenshot(path: string): Promise<Buffer> {
    return this.page.screenshot({ path });
  }

  async close(): Promise<void> {
    await this.browser.close();
    await this.server?.close();
  }

  private async call<T>(method: string, args: unknown[]): Promise<T> {
    await this.reopening;
    const page = this.page;
    const answer = page.evaluate(`window.pv.call(${JSON.stringify(method)}, ${JSON.stringify(args)})`) as
      Promise<{ ok: true; value: T } | { ok: false; name: string; message: string }>;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.callMs)));
    const r = await Promise.race([answer, late]).finally(() => clearTimeout(timer));
    if (r === 'late') {
      answer.catch(() => undefined); // it rejects once the stuck page is closed
      this.reopening = this.reopen(page); // the next call waits for it; this one answers now
      throw new HeadlessPreviewError(`the preview did not answer ${method} within ${this.callMs / 1000} s (a page stuck in a loop?); ` +
        'it was restarted, so nothing is served now: call serve again');
    }
    if (r.ok) return r.value;
    if (r.name === 'PreviewError') throw new PreviewError(r.message);
    const err = new Error(r.message);
    err.name = r.name;
    throw err;
  }

  /** A stuck harness tab is closed (Chromium ends its process) and a fresh one opened. */
  private async reopen(stuck: Page): Promise<void> {
    await within(stuck.close({ runBeforeUnload: false }), 10_000);
    // A failure here surfaces on the next call (page.evaluate on the closed tab names it).
    this.page = await openHarness(this.context, this.harnessUrl, this.files).catch(() => stuck);
  }
}

async function openHarness(context: BrowserContext, url: string, files: ProjectFiles): Promise<Page> {
  const page = await context.newPage();
  await page.exposeFunction('__pooledFiles', (op: string, args: unknown[]) => fileCall(files, op, args));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  return page;
}

/** Waits for `p` at most `ms`; a late one is let go (its rejection swallowed). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

/** The page's file reads, answered from ProjectFiles (bytes travel as base64). */
async function fileCall(files: ProjectFiles, op: string, args: unknown[]): Promise<unknown> {
  const path = String(args[0] ?? '');
  switch (op) {
    case 'list': return files.list(path);
    case 'allFiles': return files.allFiles();
    case 'readText': return files.readText(path);
    case 'readBase64': {
      const bytes = await files.readBytes(path);
      return bytes === null ? null : Buffer.from(bytes).toString('base64');
    }
    default: throw new Error(`unknown file operation ${op}`);
  }
}
