// One wording of a memory offer for the guest's page and the host's card: never "16 GB offered of 8 GB".
import { expect, test } from 'vitest';
import { memoryOfferText } from '../../../src/app/memory-budget.ts';

const gib = (b: number) => `${b / 2 ** 30} GiB`;

test('an offer within what the browser reports reads "of"; past it, what the browser can say', () => {
  expect(memoryOfferText(6 * 2 ** 30, 8, gib)).toBe('6 GiB offered of 8 GB');
  expect(memoryOfferText(16 * 2 ** 30, 8, gib)).toBe('16 GiB offered (the browser reports 8 GB or more)');
  expect(memoryOfferText(6 * 2 ** 30, 4, gib)).toBe('6 GiB offered (the browser reports 4 GB)');
  expect(memoryOfferText(2 * 2 ** 30, 0, gib)).toBe('2 GiB offered');
});
