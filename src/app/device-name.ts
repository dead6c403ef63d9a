// What a device is called in a room by default: its browser and system, from the user agent ("Chrome on
// Android", "Safari on iPhone"), not a random tag; the user can change it (kept in this browser).

const KEY = 'pooled.deviceName';

/** "Chrome on Android", "Firefox on Linux", "Safari on iPad", "Edge on Windows"; "This device" when nothing is recognised. */
export function deviceNameFrom(userAgent: string): string {
  const ua = userAgent;
  const os = /iPhone/.test(ua) ? 'iPhone' : /iPad/.test(ua) ? 'iPad' : /Android/.test(ua) ? 'Android'
    : /CrOS/.test(ua) ? 'ChromeOS' : /Windows/.test(ua) ? 'Windows' : /Mac OS X|Macintosh/.test(ua) ? 'Mac' : /Linux/.test(ua) ? 'Linux' : '';
  const browser = /Edg\//.test(ua) ? 'Edge' : /OPR\//.test(ua) ? 'Opera' : /Firefox\/|FxiOS/.test(ua) ? 'Firefox'
    : /SamsungBrowser/.test(ua) ? 'Samsung Internet' : /Chrome\/|CriOS|Chromium/.test(ua) ? 'Chrome' : /Safari\//.test(ua) ? 'Safari' : '';
  if (browser && os) return `${browser} on ${os}`;
  return os || browser || 'This device';
}

/** The name saved in this browser, else one from the user agent. */
export function defaultDeviceName(storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage, userAgent = globalThis.navigator?.userAgent ?? ''): string {
  const saved = storage?.getItem(KEY)?.trim();
  return saved ? saved.slice(0, 64) : deviceNameFrom(userAgent);
}

/** Keep `name` as this browser's device name (empty: back to the one from the user agent). */
export function saveDeviceName(name: string, storage: Pick<Storage, 'setItem' | 'removeItem'> = localStorage): void {
  const n = name.trim().slice(0, 64);
  if (n) storage.setItem(KEY, n); else storage.removeItem(KEY);
}
