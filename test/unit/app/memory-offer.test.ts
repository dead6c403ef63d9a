// Honest memory offers: a suggestion per device from what the browser reveals (deviceMemory, which
// browsers round down and cap at 8, and Safari does not give; phone, tablet or desktop), and the user's
// own figure kept in this browser, offered again next time.
import { describe, expect, test } from 'vitest';
import { offerOf, saveMemoryOffer, savedMemoryOffer } from '../../../src/app/memory-budget.ts';
import { platformOf, suggestedOffer } from '../../../src/room/capabilities.ts';

const GiB = 2 ** 30;
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
const PIXEL = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36';
const ANDROID_TABLET = 'Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15';

class MemoryStorage {
  private readonly m = new Map<string, string>();
  getItem(k: string) { return this.m.get(k) ?? null; }
  setItem(k: string, v: string) { this.m.set(k, v); }
  removeItem(k: string) { this.m.delete(k); }
}

describe('platformOf', () => {
  test.each([
    [IPHONE, 0, 'phone'], [PIXEL, 5, 'phone'], [ANDROID_TABLET, 5, 'tablet'],
    [MAC, 5, 'tablet'],       // iPadOS says Macintosh, but a Mac has no touch points
    [MAC, 0, 'desktop'],
  ] as const)('%s (%d touch points) is a %s', (ua, touch, want) => {
    expect(platformOf({ userAgent: ua, maxTouchPoints: touch })).toBe(want);
  });
  test('Client Hints\' mobile flag makes a phone', () => expect(platformOf({ userAgent: 'X', userAgentData: { mobile: true } })).toBe('phone'));
});

describe('suggestedOffer', () => {
  test('a phone offers half of what it reports, at most 4 GiB; nothing reported (Safari): 2 GiB', () => {
    expect(suggestedOffer({ deviceMemoryGiB: 8, platform: 'phone' }).bytes).toBe(4 * GiB);
    expect(suggestedOffer({ deviceMemoryGiB: 4, platform: 'phone' }).bytes).toBe(2 * GiB);
    expect(suggestedOffer({ deviceMemoryGiB: 0, platform: 'phone' })).toEqual({ bytes: 2 * GiB, why: 'this phone\'s browser does not report its memory, so 2 GiB' });
  });
  test('a desktop reporting the cap of 8 GB has at least that: 6 GiB; one that says nothing: 4 GiB; a tablet half or 3 GiB', () => {
    expect(suggestedOffer({ deviceMemoryGiB: 8, platform: 'desktop' }).bytes).toBe(6 * GiB);
    expect(suggestedOffer({ deviceMemoryGiB: 2, platform: 'desktop' }).bytes).toBe(1 * GiB);
    expect(suggestedOffer({ deviceMemoryGiB: 0, platform: 'desktop' }).bytes).toBe(4 * GiB);
    expect(suggestedOffer({ deviceMemoryGiB: 0.5, platform: 'tablet' }).bytes).toBe(0.25 * GiB);
    expect(suggestedOffer({ deviceMemoryGiB: 0, platform: 'tablet' }).bytes).toBe(3 * GiB);
  });
});

describe('the user\'s own figure', () => {
  test('kept per device in this browser, offered again; forgotten on request; a bad stored value is ignored', () => {
    const s = new MemoryStorage();
    expect(savedMemoryOffer(s)).toBeUndefined();
    saveMemoryOffer(1.5 * GiB, s);
    expect(s.getItem('pooled.memory-offer')).toBe('1.5');
    expect(savedMemoryOffer(s)).toBe(1.5 * GiB);
    s.setItem('pooled.memory-offer', 'lots');
    expect(savedMemoryOffer(s)).toBeUndefined();
    saveMemoryOffer(undefined, s);
    expect(s.getItem('pooled.memory-offer')).toBeNull();
  });
  test('a session given a figure keeps it; one given none offers the kept one', () => {
    const had = globalThis.localStorage;
    (globalThis as { localStorage?: unknown }).localStorage = new MemoryStorage();
    try {
      expect(offerOf(undefined)).toEqual({});
      expect(offerOf(3 * GiB)).toEqual({ memoryBudgetBytes: 3 * GiB });
      expect(offerOf(undefined)).toEqual({ memoryBudgetBytes: 3 * GiB });
    } finally {
      (globalThis as { localStorage?: unknown }).localStorage = had;
    }
  });
});
