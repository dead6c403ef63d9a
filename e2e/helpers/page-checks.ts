// What every page of the app must pass (issue 28): no console error and no axe violation of moderate
// impact or worse. Shared by the e2e files that visit pages (app-first-minutes, app-every-page).
import path from 'node:path';
import type { Page } from 'playwright-core';

const AXE = path.resolve('node_modules/axe-core/axe.min.js');

/**
 * Console errors and uncaught page errors of the page and every frame in it (Playwright reports the
 * sandboxed preview frames' messages on their page too); those matching `expected` (by the message's URL
 * or text) are the test's own doing.
 */
export function consoleErrors(page: Page, expected: RegExp | null = null): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location().url;
    if (expected && (expected.test(where) || expected.test(m.text()))) return;
    errors.push(`console.error: ${m.text()} (${where})`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

/** axe-core on the page as it is now (shadow roots included): violations of moderate impact or worse. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }));
  });
  return found.filter((v) => ['moderate', 'serious', 'critical'].includes(v.impact)).map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.targets.join(' ')}`);
}
