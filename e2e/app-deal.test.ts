// The room's expert controls in a real browser: each device chooses the memory it offers (host on the
// start screen, guest on the join form), the host's device cards show it; the host edits the deal by
// hand (layer counts per device), the layer bars follow, a bad deal is refused inline, and "Back to
// automatic" restores the automatic deal. Screenshots go to test-results/app-deal-*.png.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../server/app.ts';
import { tinyModelDir } from '../test/helpers/tiny-model.ts';
import { artifactDir, newDeviceContext, startBuiltApp, type BuiltApp } from './helpers/browser.ts';

let server: RunningServer;
let browser: Browser;
let app: BuiltApp | undefined;
// The deal does not depend on the engine; the CPU reference engine loads the tiny model fastest.
const ENGINE = process.env.POOLED_E2E_ENGINE ?? 'reference';

beforeAll(async () => {
  app = await startBuiltApp({ '/models/tiny': await tinyModelDir() });
  ({ server, browser } = app);
});

afterAll(async () => { await app?.close(); });

/** Every device card on the host page: "status start-end", e.g. "ready 0-2". */
function hostDeal(page: Page): Promise<string[]> {
  return page.getByTestId('device').evaluateAll((cards) => cards.map((c) => {
    const bar = c.querySelector('pooled-layer-bar')!.shadowRoot!.querySelector('[data-testid=layer-bar]')!;
    return `${c.getAttribute('data-status')} ${bar.getAttribute('data-start')}-${bar.getAttribute('data-end')}`;
  }));
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(artifactDir(), name), fullPage: true });

test('memory budgets chosen on the start screen reach the host; a manual deal moves the split and back', async () => {
  mkdirSync(artifactDir(), { recursive: true });
  const hostContext = await newDeviceContext(browser);
  const host = await hostContext.newPage();
  const log: string[] = [];
  host.on('pageerror', (e) => log.push(`host pageerror: ${e.message}`));
  const guestContext = await newDeviceContext(browser, { width: 390, height: 844 });
  const guest = await guestContext.newPage();
  guest.on('pageerror', (e) => log.push(`guest pageerror: ${e.message}`));
  try {
    // Host: the memory field shows the default this device would offer; the host offers 3 GiB instead.
    await host.goto(`${server.url}/?engine=${ENGINE}&name=Laptop&speed=1`);
    await expect.poll(() => host.getByTestId('host-memory-default').textContent(), { timeout: 60_000 }).toMatch(/^Empty: the default, \d/);
    await host.getByLabel('Memory this device offers the room (GiB)').first().fill('3');
    await host.getByTestId('host-room').click();
    const invite = host.getByTestId('invite-link');
    await invite.waitFor({ timeout: 120_000 });
    const link = await invite.inputValue();
    expect(new URL(host.url()).searchParams.get('mem')).toBe('3');
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-4']);
    expect(await host.getByTestId('device-memory').first().textContent()).toMatch(/^3\.0 GiB offered/);

    // Guest (phone-sized): joins from the start screen's form, offering 1.5 GiB.
    await guest.goto(`${server.url}/?engine=${ENGINE}&name=Phone&speed=1`);
    await guest.getByTestId('join-link').fill(link);
    await guest.getByTestId('join-memory').fill('1.5');
    await shot(guest, 'app-deal-guest-join-form.png');
    await guest.getByTestId('join-room').click();
    await expect.poll(() => guest.getByTestId('guest-status').textContent(), { timeout: 120_000 }).toBe('ready');
    expect(await guest.getByTestId('guest-memory-offered').textContent()).toMatch(/^1\.5 GiB offered/);
    expect(new URL(guest.url()).searchParams.get('mem')).toBe('1.5');   // a reload rejoins offering the same

    // The host's card for the phone shows its budget; equal speeds and room for all 4 layers: 2 + 2.
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-2', 'ready 2-4']);
    expect(await host.getByTestId('device-memory').nth(1).textContent()).toMatch(/^1\.5 GiB offered/);
    expect(await host.getByTestId('deal-mode').getAttribute('data-mode')).toBe('auto');

    // Edit deal, from the keyboard: the editor lists each device's layer count, labelled by its name.
    await host.getByTestId('edit-deal').focus();
    await host.keyboard.press('Enter');
    expect(await host.getByTestId('edit-deal').getAttribute('aria-expanded')).toBe('true');
    const laptop = host.getByRole('spinbutton', { name: /^Laptop/ });
    const phone = host.getByRole('spinbutton', { name: /^Phone/ });
    expect([await laptop.inputValue(), await phone.inputValue()]).toEqual(['2', '2']);
    // Each device's share in bytes (weights + KV of its layers, the host's embedding and head), beside what it offers.
    const shares = host.getByTestId('deal-bytes');
    const [hostBytes, phoneBytes] = await Promise.all([0, 1].map(async (i) => Number(await shares.nth(i).getAttribute('data-bytes'))));
    expect(hostBytes).toBeGreaterThan(phoneBytes);
    expect(phoneBytes).toBeGreaterThan(0);
    expect(await shares.nth(0).textContent()).toMatch(/^· [\d.]+ [KMG]?i?B of 3\.0 GiB$/);
    expect(await shares.nth(1).textContent()).toMatch(/^· [\d.]+ [KMG]?i?B of 1\.5 GiB$/);

    // A bad deal (5 layers of 4) is refused inline, naming the device; nothing changes.
    await laptop.fill('3');
    await phone.fill('2');
    const pastTheEnd = Number(await shares.nth(1).getAttribute('data-bytes'));          // [3, 5): only layer 3 exists
    expect(pastTheEnd).toBeLessThan(phoneBytes);
    expect(Number(await shares.nth(0).getAttribute('data-bytes'))).toBeGreaterThan(hostBytes);
    await host.getByTestId('deal-apply').click();
    const problem = host.getByTestId('deal-error');
    await problem.waitFor({ timeout: 5_000 });
    expect(await host.getByTestId('deal-sum').textContent()).toBe('5 of 4 dealt');
    expect(await problem.textContent()).toMatch(/^DealError: the counts add up to 5 of the model's 4 layers \(device "Phone": \[3, 5\) is not a layer range/);
    await shot(host, 'app-deal-host-bad-deal.png');
    expect(await hostDeal(host)).toEqual(['ready 0-2', 'ready 2-4']);

    // 3 + 1: the split moves, both devices reload, the layer bars follow on the host and on the phone.
    await phone.fill('1');
    expect(await problem.count()).toBe(0);
    expect(Number(await shares.nth(1).getAttribute('data-bytes'))).toBe(pastTheEnd);
    await phone.press('Enter');                 // submits the form
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-3', 'ready 3-4']);
    expect(await host.getByTestId('deal-mode').getAttribute('data-mode')).toBe('manual');
    expect(await host.getByTestId('deal-editor').count()).toBe(0);
    const guestBar = guest.locator('pooled-layer-bar').getByTestId('layer-bar');
    await expect.poll(async () => `${await guestBar.getAttribute('data-start')}-${await guestBar.getAttribute('data-end')}`, { timeout: 60_000 }).toBe('3-4');
    await expect.poll(() => guest.getByTestId('guest-status').textContent(), { timeout: 60_000 }).toBe('ready');
    await shot(host, 'app-deal-host-manual.png');
    await shot(guest, 'app-deal-guest-manual.png');

    // Back to automatic: the even split again.
    await host.getByTestId('deal-auto').click();
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-2', 'ready 2-4']);
    expect(await host.getByTestId('deal-mode').getAttribute('data-mode')).toBe('auto');
    await shot(host, 'app-deal-host-auto.png');

    // The phone offers less from its own screen: it rejoins (a reload, same device) with 0.5 GiB.
    await guest.getByTestId('guest-memory-change').click();
    await guest.getByTestId('guest-memory').fill('0.5');
    await shot(guest, 'app-deal-guest-change-memory.png');
    await guest.getByTestId('guest-memory-rejoin').click();
    await expect.poll(() => guest.getByTestId('guest-memory-offered').textContent({ timeout: 5_000 }).catch(() => ''), { timeout: 60_000 }).toMatch(/^512 MiB offered/);
    await expect.poll(() => guest.getByTestId('guest-status').textContent({ timeout: 5_000 }).catch(() => null), { timeout: 120_000 }).toBe('ready');
    expect(new URL(guest.url()).searchParams.get('mem')).toBe('0.5');
    await expect.poll(async () => host.getByTestId('device-memory').allTextContents(), { timeout: 60_000 })
      .toEqual([expect.stringMatching(/^3\.0 GiB offered/), expect.stringMatching(/^512 MiB offered/)]);
    await expect.poll(() => hostDeal(host), { timeout: 120_000 }).toEqual(['ready 0-2', 'ready 2-4']);
  } catch (e) {
    await shot(host, 'app-deal-host-failed.png').catch(() => undefined);
    await shot(guest, 'app-deal-guest-failed.png').catch(() => undefined);
    throw new Error(`${(e as Error).message}\n${log.join('\n')}`, { cause: e });
  } finally {
    await guestContext.close();
    await hostContext.close();
  }
});
