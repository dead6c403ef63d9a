// Errors in plain words and the names and reasons a newcomer reads: each error the app meets most is
// explained (what, cause, what to do) with the technical text kept whole for the folded detail; device
// names come from the browser and system; a guest reads why it left in its own words.
import { describe, expect, test } from 'vitest';
import { explainError } from '../../../src/app/explain-error.ts';
import { defaultDeviceName, deviceNameFrom } from '../../../src/app/device-name.ts';
import { removedWhy } from '../../../src/app/guest-session.ts';

describe('errors in plain words', () => {
  test('a model download that failed: offline or unreachable, Retry or another model; the detail kept', () => {
    const raw = 'ModelSourceError: tokenizer_config.json: GET https://huggingface.co/Qwen/Qwen3-1.7B/resolve/main/tokenizer_config.json failed: Failed to fetch';
    const e = explainError(raw);
    expect(e.what).toBe("The model's files could not be downloaded.");
    expect(e.cause).toMatch(/offline/);
    expect(e.todo).toMatch(/Retry/);
    expect(e.detail).toBe(raw);
  });

  test('a server that cannot be reached names CORS and the flags for each server', () => {
    const e = explainError('ServerError: the server at http://127.0.0.1:8080 cannot be reached: Failed to fetch');
    expect(e.what).toBe('The model server did not answer.');
    expect(e.cause).toMatch(/CORS/);
    expect(e.cause).toMatch(/--allowed-origins/);
    expect(e.cause).toMatch(/OLLAMA_ORIGINS/);
  });

  test('a closed room, a memory shortfall, and an unknown error', () => {
    expect(explainError('JoinError: room 0123abcd… is not open (its host is gone)').what).toBe('This room is closed.');
    expect(explainError('DealError: the room\'s memory holds 3 of 28 layers (Laptop: 3): add a device or raise a memory budget').todo).toMatch(/Add a device/);
    const odd = explainError('WeirdError: the flux capacitor is cold');
    expect(odd.what).toBe('Something went wrong.');
    expect(odd.cause).toBe('The flux capacitor is cold.');
    expect(odd.detail).toBe('WeirdError: the flux capacitor is cold');
  });
});

describe('device names and goodbyes', () => {
  test('names from real user agents', () => {
    expect(deviceNameFrom('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36')).toBe('Chrome on Android');
    expect(deviceNameFrom('Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1')).toBe('Safari on iPhone');
    expect(deviceNameFrom('Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0')).toBe('Firefox on Linux');
    expect(deviceNameFrom('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0')).toBe('Edge on Windows');
    expect(deviceNameFrom('')).toBe('This device');
    // A saved name wins over the user agent's.
    expect(defaultDeviceName({ getItem: () => 'Kitchen laptop' }, 'Firefox/1 Linux')).toBe('Kitchen laptop');
    expect(defaultDeviceName({ getItem: () => null }, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0')).toBe('Firefox on Linux');
  });

  test('a guest reads that the host closed the room, or removed it, not both', () => {
    expect(removedWhy('the host closed the room')).toBe('The host closed the room.');
    expect(removedWhy('removed by the host')).toBe('The host removed this device from the room.');
    expect(removedWhy('removed by the host: no loading progress for 120000 ms')).toBe('The host removed this device: no loading progress for 120000 ms.');
  });
});
