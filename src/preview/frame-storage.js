// localStorage and sessionStorage for a preview page. The page runs in an opaque origin (sandbox
// without allow-same-origin), where the browser's own Storage throws SecurityError, so todo lists and
// theme toggles would fail on code that has no bug. This gives the page a Storage with the real API:
// getItem / setItem / removeItem / clear / key / length, named properties (localStorage.todos = '…',
// delete localStorage.todos, Object.keys(localStorage)), values coerced to strings, TypeError for missing
// arguments, and a QuotaExceededError past the quota (keys and values counted in UTF-16 code units,
// 5 Mi of them, which is what browsers allow an origin).
//
// The host keeps the contents per port (host.ts, storage.ts) and puts them in the manifest, so they are
// there before any page script runs and survive reloads; installStorage sends it each change, batched.
// IndexedDB gets no stand-in: its open() throws a SecurityError that says why and what to use instead.
//
// A fragment, not a module: srcdoc.ts splices it into frame-runtime.js's closure in place of the
// __POOLED_STORAGE__ comment, and test/unit/preview/frame-storage.test.ts evaluates it on its own.
const makeStorage = (entries, quota, onChange, StorageProto) => {
  const items = new Map();
  let used = 0;
  for (const [k, v] of entries) {
    if (typeof k !== 'string' || typeof v !== 'string' || items.has(k) || used + k.length + v.length > quota) continue;
    items.set(k, v);
    used += k.length + v.length;
  }
  const need = (method, given, n) => {
    if (given < n) {
      throw new TypeError(`Failed to execute '${method}' on 'Storage': ${n} argument${n > 1 ? 's' : ''} required, but only ${given} present.`);
    }
  };
  const api = {
    getItem(key) {
      need('getItem', arguments.length, 1);
      const k = String(key);
      return items.has(k) ? items.get(k) : null;
    },
    setItem(key, value) {
      need('setItem', arguments.length, 2);
      const k = String(key);
      const v = String(value);
      const old = items.get(k);
      if (old === v) return;
      const next = used - (old === undefined ? 0 : k.length + old.length) + k.length + v.length;
      if (next > quota) {
        throw new DOMException(`Failed to execute 'setItem' on 'Storage': Setting the value of '${k.length > 100 ? k.slice(0, 100) + '…' : k}' exceeded the quota.`, 'QuotaExceededError');
      }
      items.set(k, v);
      used = next;
      onChange(k, v);
    },
    removeItem(key) {
      need('removeItem', arguments.length, 1);
      const k = String(key);
      if (!items.has(k)) return;
      used -= k.length + items.get(k).length;
      items.delete(k);
      onChange(k, null);
    },
    clear() {
      if (items.size === 0) return;
      items.clear();
      used = 0;
      onChange(null, null);
    },
    key(index) {
      need('key', arguments.length, 1);
      const n = Number(index) >>> 0; // WebIDL unsigned long
      if (n >= items.size) return null;
      let i = 0;
      for (const k of items.keys()) if (i++ === n) return k;
      return null;
    },
  };
  // The prototype: Storage's own (instanceof Storage, "[object Storage]"), its members ours.
  const proto = Object.create(StorageProto);
  for (const [name, fn] of Object.entries(api)) {
    Object.defineProperty(proto, name, { value: fn, writable: true, enumerable: true, configurable: true });
  }
  Object.defineProperty(proto, 'length', { get: () => items.size, enumerable: true, configurable: true });
  // Named properties as the platform's Storage has them: visible unless the prototype has the name,
  // assignment always stores (localStorage.key = 'x' stores an item called "key"), all configurable.
  const named = (p) => typeof p === 'string' && !(p in proto) && items.has(p);
  const storage = new Proxy(Object.create(proto), {
    get(t, p, receiver) {
      return named(p) ? items.get(p) : Reflect.get(t, p, receiver);
    },
    set(t, p, value, receiver) {
      if (typeof p !== 'string' || receiver !== storage) return Reflect.set(t, p, value, receiver);
      api.setItem(p, value);
      return true;
    },
    has(t, p) {
      return named(p) || Reflect.has(t, p);
    },
    deleteProperty(t, p) {
      if (named(p)) { api.removeItem(p); return true; }
      return Reflect.deleteProperty(t, p);
    },
    ownKeys(t) {
      return [...items.keys(), ...Reflect.ownKeys(t).filter((k) => typeof k !== 'string' || !items.has(k))];
    },
    getOwnPropertyDescriptor(t, p) {
      if (named(p)) return { value: items.get(p), writable: true, enumerable: true, configurable: true };
      return Reflect.getOwnPropertyDescriptor(t, p);
    },
    defineProperty(t, p, desc) {
      if (typeof p !== 'string') return Reflect.defineProperty(t, p, desc);
      if (!('value' in desc) || desc.get || desc.set) return false; // a named property is data only
      api.setItem(p, desc.value);
      return true;
    },
    preventExtensions() {
      return false; // as for every platform object with named properties
    },
  });
  return storage;
};

/**
 * Puts localStorage and sessionStorage (contents from the manifest's `data`) and the IndexedDB stand-in
 * on `win`. Changes go to the host by `send` batched: one message per area at the end of the task that
 * made them, at most every FLUSH_MS (a page writing in a loop sends a few messages a second), and when
 * the page goes away; each with at most BATCH changes (frame-protocol.ts checks). The returned flush()
 * sends what is pending now: the runtime calls it before it answers the host's ping, which the host
 * sends before it replaces the frame, so no write is lost to a serve.
 */
const installStorage = (win, data, send, { now, timer, microtask, onPageHide }) => {
  const FLUSH_MS = 100, BATCH = 5000;
  const pending = Object.create(null); // area -> { clear, changes: Map key -> value | null }
  let scheduled = false, flushedAt = -Infinity;
  const flush = () => {
    scheduled = false;
    flushedAt = now();
    for (const area of ['local', 'session']) {
      const p = pending[area];
      if (!p) continue;
      pending[area] = undefined;
      const all = [...p.changes];
      let at = 0, first = true;
      do {
        const changes = [];
        for (let j = 0; j < BATCH && at < all.length; j++, at++) {
          Reflect.defineProperty(changes, j, { value: all[at], writable: true, enumerable: true, configurable: true });
        }
        send({ t: 'storage', area, clear: first && p.clear, changes });
        first = false;
      } while (at < all.length);
    }
  };
  const changed = (area, key, value) => {
    const p = pending[area] || (pending[area] = { clear: false, changes: new Map() });
    if (key === null) { p.clear = true; p.changes.clear(); } else p.changes.set(key, value);
    if (scheduled) return;
    scheduled = true;
    const wait = flushedAt + FLUSH_MS - now();
    if (wait <= 0) microtask(flush); else timer(flush, wait);
  };
  onPageHide(() => { if (scheduled) flush(); });
  for (const area of ['local', 'session']) {
    const store = makeStorage(data[area], data.quota, (k, v) => changed(area, k, v), win.Storage.prototype);
    Reflect.defineProperty(win, `${area}Storage`, { get: () => store, enumerable: true, configurable: true });
  }
  const noIndexedDb = () => {
    throw new DOMException('IndexedDB is not available in the preview: the page runs in a sandboxed frame (an opaque origin). '
      + 'Keep its data in localStorage, which the preview keeps across reloads.', 'SecurityError');
  };
  const idbFactory = Object.create(win.IDBFactory.prototype, {
    open: { value: noIndexedDb, enumerable: true },
    deleteDatabase: { value: noIndexedDb, enumerable: true },
    databases: { value: () => new Promise(noIndexedDb), enumerable: true },
  });
  Reflect.defineProperty(win, 'indexedDB', { get: () => idbFactory, enumerable: true, configurable: true });
  return { flush: () => { if (scheduled) flush(); } };
};
