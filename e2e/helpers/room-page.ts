// The room harness (harness/room.html) as the room e2e tests open it: a page per device, ready once the
// harness has published window.__room (or said why it failed).
import type { BrowserContext, Page } from 'playwright-core';

export const ev = <T>(page: Page, js: string): Promise<T> => page.evaluate(js) as Promise<T>;

/** Open `url` in `context`, wait for the harness to start, and fail naming the URL if it could not. */
export async function openRoomPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`[page error] ${e.message}`));
  await page.goto(url);
  await page.waitForFunction('window.__room && (window.__room.failed || window.__room.events || window.__room.answers)', null, { timeout: 60_000, polling: 200 });
  const failed = await ev<string | undefined>(page, 'window.__room.failed');
  if (failed) throw new Error(`${url}: ${failed}`);
  return page;
}
