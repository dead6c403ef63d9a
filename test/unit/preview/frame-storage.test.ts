// The page's localStorage / sessionStorage (src/preview/frame-storage.js, a fragment of the frame
// runtime) evaluated on its own in Node, against the Storage API as browsers give it; and the host's
// copy (storage.ts), which never grows past the quota whatever a frame claims. The real thing in
// Chromium, reloads and isolation included, is e2e/preview-storage.test.ts.
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { PreviewStorage, StorageArea } from '../../../src/preview/storage.ts';

type Change = [string | null, string | null];
type MakeStorage = (entries: [string, string][], quota: number, onChange: (k: string | null, v: string | null) => void, proto: object) => Storage;
type InstallStorage = (win: Record<string, unknown>, data: unknown, send: (m: unknown) => void, tools: unknown) => { flush(): void };

const source = readFileSync(new URL('../../../src/preview/frame-storage.js', import.meta.url), 'utf8');
const { makeStorage, installStorage } = new Function(`${source}\nreturn { makeStorage, installStorage };`)() as { makeStorage: MakeStorage; installStorage: InstallStorage };
/** Stands in for the frame's Storage.prototype (in a browser, the real one). */
class FakeStorage {}
Object.defineProperty(FakeStorage.prototype, Symbol.toStringTag, { value: 'Storage' });

describe('the page\'s Storage has the real API', () => {
  let changes: Change[];
  let s: Storage;
  beforeEach(() => {
    changes = [];
    s = makeStorage([['theme', 'dark']], 100, (k, v) => changes.push([k, v]), FakeStorage.prototype);
  });

  it('getItem / setItem / removeItem / clear / key / length, values as strings', () => {
    expect(s.getItem('theme')).toBe('dark');
    expect(s.getItem('none')).toBeNull();
    s.setItem('n', 42 as unknown as string);
    s.setItem('obj', { toString: () => 'as text' } as unknown as string);
    s.setItem('nothing', null as unknown as string);
    expect([s.getItem('n'), s.getItem('obj'), s.getItem('nothing')]).toEqual(['42', 'as text', 'null']);
    expect(s.length).toBe(4);
    expect([0, 1, 2, 3, 4, -1, 2 ** 32].map((i) => s.key(i))).toEqual(['theme', 'n', 'obj', 'nothing', null, null, 'theme']);
    s.removeItem('n');
    s.removeItem('never there');
    expect(s.length).toBe(3);
    s.clear();
    expect(s.length).toBe(0);
    expect(changes).toEqual([['n', '42'], ['obj', 'as text'], ['nothing', 'null'], ['n', null], [null, null]]);
  });

  it('named properties: read, assign, delete, in, Object.keys, JSON; methods win over items of the same name', () => {
    const any = s as unknown as Record<string, unknown>;
    expect(any.theme).toBe('dark');
    any.todos = ['a', 'b'];
    expect(s.getItem('todos')).toBe('a,b');
    expect('todos' in s).toBe(true);
    expect(Object.keys(s)).toEqual(['theme', 'todos']);
    expect(JSON.stringify(s)).toBe('{"theme":"dark","todos":"a,b"}');
    expect({ ...s }).toEqual({ theme: 'dark', todos: 'a,b' });
    delete any.todos;
    expect(s.getItem('todos')).toBeNull();
    expect('todos' in s).toBe(false);
    any.getItem = 'shadowed';                  // stored as an item, as browsers do; the method stays
    expect(typeof s.getItem).toBe('function');
    expect(s.getItem('getItem')).toBe('shadowed');
    expect(Object.getOwnPropertyDescriptor(s, 'theme')).toEqual({ value: 'dark', writable: true, enumerable: true, configurable: true });
    expect(any.missing).toBeUndefined();
    expect(Object.prototype.toString.call(s)).toBe('[object Storage]');
    expect(s instanceof FakeStorage).toBe(true);
    expect(Object.isExtensible(s)).toBe(true);
    expect(() => Object.preventExtensions(s)).toThrow(TypeError);
  });

  it('missing arguments throw TypeError as browsers word it; an unchanged value is not reported', () => {
    const call = (f: string, ...a: unknown[]) => (s as unknown as Record<string, (...x: unknown[]) => unknown>)[f]!(...a);
    expect(() => call('getItem')).toThrow(/^Failed to execute 'getItem' on 'Storage': 1 argument required, but only 0 present\.$/);
    expect(() => call('setItem', 'k')).toThrow(/2 arguments required, but only 1 present/);
    expect(() => call('removeItem')).toThrow(TypeError);
    expect(() => call('key')).toThrow(TypeError);
    s.setItem('theme', 'dark');
    expect(changes).toEqual([]);
  });

  it('past the quota (keys and values in UTF-16 code units): QuotaExceededError, nothing changed', () => {
    s.setItem('k', 'x'.repeat(100 - 'theme'.length - 'dark'.length - 1)); // exactly full
    let thrown: unknown;
    try { s.setItem('k2', 'y'); } catch (e) { thrown = e; }
    expect(thrown).toBeInstanceOf(DOMException);
    expect((thrown as DOMException).name).toBe('QuotaExceededError');
    expect((thrown as DOMException).code).toBe(22);
    expect(s.getItem('k2')).toBeNull();
    expect(() => { (s as unknown as Record<string, string>).big = 'z'; }).toThrow(/exceeded the quota/);
    s.setItem('k', 'short');                    // replacing a value frees its old size
    s.setItem('k2', 'y');
    expect(s.getItem('k2')).toBe('y');
  });

  it('contents from the host that break the rules are not taken (wrong types, duplicates, over the quota)', () => {
    const t = makeStorage([['a', '1'], ['a', '2'], [7, 'x'] as unknown as [string, string], ['b', 'y'.repeat(200)], ['c', '3']], 100, () => {}, FakeStorage.prototype);
    expect(Object.keys(t)).toEqual(['a', 'c']);
    expect(t.getItem('a')).toBe('1');
  });
});

describe('installStorage: two areas on the window, changes batched to the host, no IndexedDB', () => {
  function install(data = { quota: 1000, local: [['x', '1']] as [string, string][], session: [] as [string, string][] }) {
    const sent: { t: string; area: string; clear: boolean; changes: [string, string | null][] }[] = [];
    const microtasks: (() => void)[] = [];
    const timers: { fn: () => void; ms: number }[] = [];
    let clock = 1000;
    let pageHide: (() => void) | undefined;
    const win: Record<string, unknown> = { Storage: FakeStorage, IDBFactory: class {} };
    const handle = installStorage(win, data, (m) => sent.push(m as (typeof sent)[number]), {
      now: () => clock, timer: (fn: () => void, ms: number) => timers.push({ fn, ms }), microtask: (fn: () => void) => microtasks.push(fn),
      onPageHide: (fn: () => void) => { pageHide = fn; },
    });
    return { win, sent, microtasks, timers, tick: (ms: number) => { clock += ms; }, hide: () => pageHide!(), flush: () => handle.flush() };
  }

  it('one message per area at the end of the task; later bursts wait for the flush interval; pagehide sends what is left', () => {
    const f = install();
    const local = f.win.localStorage as Storage;
    const session = f.win.sessionStorage as Storage;
    expect(local.getItem('x')).toBe('1');
    for (let i = 0; i < 50; i++) local.setItem('counter', String(i));
    local.removeItem('x');
    session.setItem('tab', 'a');
    expect(f.sent).toEqual([]);
    expect(f.microtasks).toHaveLength(1);
    f.microtasks.shift()!();
    expect(f.sent).toEqual([
      { t: 'storage', area: 'local', clear: false, changes: [['counter', '49'], ['x', null]] },
      { t: 'storage', area: 'session', clear: false, changes: [['tab', 'a']] },
    ]);
    f.tick(10);
    local.clear();
    local.setItem('after', 'clear');
    expect(f.microtasks).toHaveLength(0);
    expect(f.timers.map((t) => t.ms)).toEqual([90]);
    f.hide();                                  // the page goes away before the timer: sent now
    expect(f.sent.at(-1)).toEqual({ t: 'storage', area: 'local', clear: true, changes: [['after', 'clear']] });
    f.timers.shift()!.fn();                    // the timer later finds nothing left
    expect(f.sent).toHaveLength(3);
    session.setItem('tab', 'b');               // flush() (before the host's ping is answered) sends at once
    f.flush();
    expect(f.sent.at(-1)).toEqual({ t: 'storage', area: 'session', clear: false, changes: [['tab', 'b']] });
    f.flush();
    expect(f.sent).toHaveLength(4);
  });

  it('a large burst goes in messages of at most 5,000 changes, the clear with the first', () => {
    const f = install({ quota: 1 << 20, local: [], session: [] });
    const local = f.win.localStorage as Storage;
    local.clear();
    local.setItem('seed', '1');
    local.clear();
    for (let i = 0; i < 12_000; i++) local.setItem(`k${i}`, 'v');
    f.microtasks.shift()!();
    expect(f.sent.map((m) => [m.clear, m.changes.length])).toEqual([[true, 5000], [false, 5000], [false, 2000]]);
  });

  it('IndexedDB: open says why there is none and what to use instead', async () => {
    const f = install();
    const idb = f.win.indexedDB as { open(name: string): unknown; databases(): Promise<unknown> };
    expect(() => idb.open('todos')).toThrow(/^IndexedDB is not available in the preview: .*localStorage/);
    try { idb.open('x'); } catch (e) { expect((e as DOMException).name).toBe('SecurityError'); }
    await expect(idb.databases()).rejects.toThrow(/not available in the preview/);
  });
});

describe('the host\'s copy', () => {
  it('applies batches in order, per port, and refuses what would pass the quota whatever the frame says', () => {
    const store = new PreviewStorage(20);
    const local = store.area(5173, 'local');
    expect(local.apply(false, [['a', '12345'], ['b', '678'], ['a', null]])).toBe(0);
    expect(store.snapshot(5173)).toEqual({ quota: 20, local: [['b', '678']], session: [] });
    expect(store.snapshot(5174).local).toEqual([]);
    expect(local.apply(false, [['big', 'x'.repeat(17)], ['c', 'ok']])).toBe(1); // 4 + 20 > 20: refused
    expect(local.entries()).toEqual([['b', '678'], ['c', 'ok']]);
    expect(local.size).toBe(7);
    expect(local.apply(true, [['d', '1']])).toBe(0);
    expect(local.entries()).toEqual([['d', '1']]);
    expect(store.area(5173, 'session').length).toBe(0);
  });

  it('the default quota is 5 Mi code units per area', () => {
    const area = new StorageArea();
    expect(area.apply(false, [['k', 'x'.repeat(5 * 1024 * 1024 - 1)]])).toBe(0);
    expect(area.apply(false, [['k2', '']])).toBe(1);
  });
});
