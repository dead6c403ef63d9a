// The preview for Node (the agent CLI): the same three tools, by driving headless Chromium. It starts
// the app's server (server/app.ts, which serves the built harness pages), opens harness/preview.html
// with ?files=node, and answers the page's file reads from a ProjectFiles here (a folder on disk).
// Needs the built app (`npm run build`) and Chromium (docs/platform.md, WebGPU in Chromium; flags shared with the e2e tests).
import type { Browser, Page } from 'playwright-core';
import type { ProjectFiles } from '../agent/files/types.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../e2e/helpers/browser.ts';
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

export class HeadlessPreview implements PreviewApi {
  private constructor(private readonly page: Page, private readonly browser: Browser, private readonly server?: RunningServer) {}

  static async start(opts: HeadlessPreviewOptions): Promise<HeadlessPreview> {
    let server: RunningServer | undefined;
    let browser: Browser | undefined;
    try {
      if (!opts.appUrl) server = await startServer({ port: 0, root: opts.appRoot });
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true }).catch((e: Error) => {
        throw new HeadlessPreviewError(`could not start Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH, or run \`npm run system-deps\`): ${e.message.split('\n')[0]}`);
      });
      const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1024, height: 768 } });
      const page = await context.newPage();
      await page.exposeFunction('__pooledFiles', (op: string, args: unknown[]) => fileCall(opts.files, op, args));
      await page.goto(`${opts.appUrl ?? server!.url}/harness/preview.html?files=node`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
      return new HeadlessPreview(page, browser, server);
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
    const r = (await this.page.evaluate(`window.pv.call(${JSON.stringify(method)}, ${JSON.stringify(args)})`)) as
      { ok: true; value: T } | { ok: false; name: string; message: string };
    if (r.ok) return r.value;
    if (r.name === 'PreviewError') throw new PreviewError(r.message);
    const err = new Error(r.message);
    err.name = r.name;
    throw err;
  }
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
