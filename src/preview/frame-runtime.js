// Runs first inside every preview iframe (sandbox="allow-scripts": an opaque origin, its own process).
// Imported as text (?raw) by host.ts and inlined into the frame's document after the JSON manifest, so it
// runs synchronously while the frame's HTML is still being parsed. It:
//  1. reads the manifest (every file of the served folder, specifiers already rewritten to virtual URLs
//     http://pooled-preview.invalid:P/…) and makes a blob: URL per file; an import map sends each virtual
//     module URL to its blob, so ES modules import each other (cycles included) without a server;
//  2. patches console, error/unhandledrejection, fetch() and the src setters, and reports to the host
//     over a MessageChannel it receives after a hello (the host checks the hello's source is this frame);
//  3. rewrites the page's HTML (src/href, inline url()) to the blob URLs and document.write()s it in,
//     which keeps this realm (patches and listeners stay) and lets classic scripts run in order;
//  4. runs run_js modules on request, next to the page;
//  5. gives the page localStorage and sessionStorage (frame-storage.js), kept by the host per port, and
//     an IndexedDB whose open() says why there is none; a reload asks the host to serve the page afresh.
// The page shares this realm and may be hostile: every builtin the bridge relies on is captured before
// any page script runs and only ever called through Reflect.apply, the port is never reachable from the
// page (its delivery is stopped before any listener of the page sees it), and the console is batched and
// rate-limited so a flood cannot drown the host.
// Plain JS on purpose: it is shipped as source text, never bundled. __POOLED_TOKEN__ is replaced by the host.
(() => {
  'use strict';
  // ---- builtins, captured before the page can replace them ------------------------------------------
  const apply = Reflect.apply;
  const define = Reflect.defineProperty; // never runs a setter the page put on a prototype
  const makeUrl = URL.createObjectURL;
  const BlobOf = Blob;
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const portPost = MessagePort.prototype.postMessage;
  const portStart = MessagePort.prototype.start;
  const portClose = MessagePort.prototype.close;
  const listen = EventTarget.prototype.addEventListener;
  const stopNow = Event.prototype.stopImmediatePropagation;
  const dataOf = getter(MessageEvent.prototype, 'data');
  const sourceOf = getter(MessageEvent.prototype, 'source');
  const portsOf = getter(MessageEvent.prototype, 'ports');
  const then = Promise.prototype.then;
  const timer = setTimeout;
  const now = performance.now.bind(performance);
  const host = parent.parent; // the host's window, above the shell (frame-shell.ts); the page can replace window.parent, not this

  const TOKEN = '__POOLED_TOKEN__';
  document.currentScript.remove(); // the token is not left in the page's DOM
  const manifestEl = document.getElementById('__pooled_manifest');
  const M = JSON.parse(manifestEl.textContent);
  manifestEl.remove();
  const ORIGIN = M.origin;
  const MAX_TEXT = 4000;

  // A reload of this document (location.reload(), history.go(0)) would run the page again from the
  // srcdoc it was first given: the files and the storage as they were then. Instead the host serves the
  // page afresh, with current files and storage; this document only asks for that and writes nothing.
  const navigation = performance.getEntriesByType('navigation')[0];
  if (navigation && navigation.type === 'reload') {
    let asked = 0;
    const askAgain = () => {
      if (asked++ >= 3) return;
      host.postMessage({ t: 'pv-hello', token: TOKEN, reload: true }, '*');
      timer(askAgain, 500);
    };
    askAgain();
    return;
  }

  // ---- bridge to the host -------------------------------------------------------------------------
  // Outgoing messages wait here (a null-prototype list: no accessor of the page's on Array.prototype
  // can see them) until the port arrives, then go out in order.
  let port = null;
  const queue = Object.create(null);
  let queued = 0;
  const post = (msg) => apply(portPost, port, [msg]);
  const send = (msg) => {
    if (msg.t !== 'logs') flushLogs(); // a run's output arrives before its end
    if (port) post(msg); else queue[queued++] = msg;
  };
  const waiters = new Map();
  let nextId = 1;
  const request = (msg) => new Promise((resolve) => {
    const id = nextId++;
    waiters.set(id, resolve);
    send({ ...msg, id });
  });
  // Capture phase on the window and registered first: this listener sees the host's port before any
  // listener of the page, and stops the event there. It stays, so a reload or a second hello (the page
  // may say one itself) hands the new port to the bridge, never to the page.
  apply(listen, window, ['message', (e) => {
    const data = apply(dataOf, e, []);
    if (apply(sourceOf, e, []) !== host || !data || data.t !== 'pv-port' || data.token !== TOKEN) return;
    apply(stopNow, e, []);
    const next = apply(portsOf, e, [])[0];
    if (!next) return;
    if (port) apply(portClose, port, []);
    port = next;
    apply(listen, port, ['message', onHostMessage]);
    apply(portStart, port, []);
    for (let i = 0; i < queued; i++) post(queue[i]);
    queued = 0;
  }, true]);
  // Hello until a port comes (a host busy or rate-limiting hellos answers a later one).
  let hellos = 0;
  const hello = () => {
    if (port || hellos++ >= 20) return;
    host.postMessage({ t: 'pv-hello', token: TOKEN }, '*');
    timer(hello, 500);
  };
  hello();

  // ---- localStorage, sessionStorage (frame-storage.js), no IndexedDB --------------------------------
  /*__POOLED_STORAGE__*/
  const storage = installStorage(window, M.storage || { quota: 0, local: [], session: [] }, send, {
    now, timer, microtask: queueMicrotask, onPageHide: (fn) => apply(listen, window, ['pagehide', fn]),
  });

  // ---- virtual URLs <-> files <-> blob URLs --------------------------------------------------------
  const virtualUrl = (path) => ORIGIN + '/' + path.split('/').map(encodeURIComponent).join('/');
  const pathOf = (url) => {
    if (url.origin !== ORIGIN) return null;
    let p = url.pathname;
    try { p = decodeURIComponent(p); } catch { /* keep as is */ }
    p = p.replace(/^\/+/, '');
    return p === '' || p.endsWith('/') ? p + 'index.html' : p;
  };
  const dead = URL.createObjectURL(new Blob([]));
  URL.revokeObjectURL(dead); // loading it fails at once, like a 404
  const blobs = new Map(); // path -> blob URL
  const blobToPath = new Map([[dead, '(missing file)']]);
  const VIRTUAL_IN_TEXT = new RegExp(ORIGIN.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '/[^"\')\\s]*', 'g');
  const bytesOf = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const blobFor = (path, seen = new Set()) => {
    if (blobs.has(path)) return blobs.get(path);
    const f = M.files[path];
    if (!f || seen.has(path)) return null;
    seen.add(path);
    let body = f.base64 !== undefined ? bytesOf(f.base64) : f.text;
    if (f.mime === 'text/css') {
      body = body.replace(VIRTUAL_IN_TEXT, (u) => {
        const p = pathOf(new URL(u));
        return (p !== null && blobFor(p, seen)) || dead;
      });
    }
    const url = URL.createObjectURL(new Blob([body], { type: f.mime }));
    blobs.set(path, url);
    blobToPath.set(url, path);
    return url;
  };
  /** Blob URL for a reference resolved against `base`, or undefined when it is not one of ours. */
  const mapRef = (value, base, what) => {
    let abs;
    try { abs = new URL(value, base); } catch { return undefined; }
    const p = pathOf(abs);
    if (p === null) return undefined;
    const url = blobFor(p);
    if (url) return url + abs.hash;
    report404(p, what);
    return dead;
  };
  const reported = new Set();
  const report404 = (path, what) => {
    if (reported.has(path + what)) return;
    reported.add(path + what);
    log('error', 'network', `404 Not Found: ${path}${what ? ` (${what})` : ''}`);
  };

  // ---- console and errors --------------------------------------------------------------------------
  let currentRun = 0;
  const withPaths = (text) => {
    for (const [url, path] of blobToPath) if (text.includes(url)) text = text.split(url).join(path);
    return text.split(ORIGIN + '/').join('');
  };
  const show = (v, depth = 0) => {
    if (typeof v === 'string') return v;
    if (v instanceof Error) return depth === 0 && v.stack ? v.stack : `${v.name}: ${v.message}`;
    if (typeof v === 'function') return `[Function ${v.name || 'anonymous'}]`;
    if (typeof v === 'symbol' || typeof v === 'bigint') return v.toString();
    if (v === undefined || v === null || typeof v !== 'object') return String(v);
    if (v instanceof Element) return `<${v.tagName.toLowerCase()}${v.id ? '#' + v.id : ''}>`;
    try {
      const seen = new WeakSet();
      return JSON.stringify(v, (_k, x) => {
        if (typeof x === 'bigint') return x.toString();
        if (typeof x === 'object' && x !== null) { if (seen.has(x)) return '[Circular]'; seen.add(x); }
        return x;
      }) ?? String(v);
    } catch { return Object.prototype.toString.call(v); }
  };
  // Console lines go out in batches (one message per LOG_FLUSH_MS or LOG_BATCH lines) and at most
  // LOG_PER_SECOND a second after a burst of LOG_BURST; the rest are counted and reported as dropped.
  const LOG_BURST = 1000, LOG_PER_SECOND = 500, LOG_BATCH = 200, LOG_FLUSH_MS = 50;
  let logBudget = LOG_BURST, logRefilledAt = now(), dropped = 0;
  let batch = Object.create(null), batched = 0, flushing = false;
  function flushLogs() {
    if (batched === 0 && dropped === 0) return;
    const lines = [];
    for (let i = 0; i < batched; i++) define(lines, i, { value: batch[i], writable: true, enumerable: true, configurable: true });
    const msg = { t: 'logs', lines, dropped };
    batch = Object.create(null); batched = 0; dropped = 0;
    if (port) post(msg); else queue[queued++] = msg;
  }
  // Lines still batched when the document goes (the page reloads itself or navigates) go out first.
  apply(listen, window, ['pagehide', () => flushLogs()]);
  const scheduleFlush = () => {
    if (flushing) return;
    flushing = true;
    timer(() => { flushing = false; flushLogs(); }, LOG_FLUSH_MS);
  };
  /** Spends one line of the budget; false (counted as dropped) when a flood used it up. */
  const takeLine = () => {
    const t = now();
    logBudget = Math.min(LOG_BURST, logBudget + ((t - logRefilledAt) / 1000) * LOG_PER_SECOND);
    logRefilledAt = t;
    if (logBudget < 1) { dropped++; scheduleFlush(); return false; }
    logBudget--;
    return true;
  };
  const addLine = (level, source, text) => {
    text = withPaths(String(text));
    if (text.length > MAX_TEXT) text = text.slice(0, MAX_TEXT) + '…';
    batch[batched++] = { level, source, text, run: currentRun };
    if (batched >= LOG_BATCH) flushLogs(); else scheduleFlush();
  };
  const log = (level, source, text) => { if (takeLine()) addLine(level, source, text); };
  // The budget is spent before the arguments are formatted, so a flood of dropped lines costs little; a
  // dropped line skips the browser's own console too (each line there is work for devtools, or a driver).
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = console[level];
    console[level] = function (...args) {
      if (!takeLine()) return undefined;
      try { addLine(level, 'console', args.map((a) => show(a)).join(' ')); } catch { /* never break the page */ }
      return apply(original, this, args);
    };
  }
  const originalAssert = console.assert;
  console.assert = function (ok, ...args) {
    if (!ok) log('error', 'console', 'Assertion failed' + (args.length ? ': ' + args.map((a) => show(a)).join(' ') : ''));
    return originalAssert.call(this, ok, ...args);
  };
  const where = (file, line, col) => {
    const path = blobToPath.get(file) ?? (file && file.startsWith(ORIGIN) ? pathOf(new URL(file)) : file === location.href || !file ? M.page : file);
    return line ? `${path}:${line}:${col} ` : '';
  };
  addEventListener('error', (e) => {
    if (e instanceof ErrorEvent) {
      log('error', 'error', where(e.filename, e.lineno, e.colno) + e.message);
      return;
    }
    const el = e.target;
    if (!el || el === window || !el.tagName) return;
    const url = el.currentSrc || el.src || el.href || '';
    if (url === dead || url.startsWith(dead + '#')) return; // already reported as a 404
    log('error', 'network', `failed to load <${el.tagName.toLowerCase()}> ${withPaths(url)}`);
  }, true);
  addEventListener('unhandledrejection', (e) => {
    const r = e.reason;
    log('error', 'rejection', 'Uncaught (in promise) ' + (r instanceof Error ? `${r.name}: ${r.message}` : show(r)));
  });

  // ---- fetch() and src setters see the project's files ---------------------------------------------
  const realFetch = window.fetch.bind(window);
  window.fetch = async function (input, init) {
    const raw = input instanceof Request ? input.url : String(input);
    let abs;
    try { abs = new URL(raw, document.baseURI); } catch { return realFetch(input, init); }
    const p = pathOf(abs);
    if (p === null) return realFetch(input, init);
    const method = ((init && init.method) || (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      log('error', 'network', `${method} /${p} 405 (Method Not Allowed): the preview serves files only`);
      return new Response('Method Not Allowed', { status: 405, statusText: 'Method Not Allowed' });
    }
    const res = await request({ t: 'fetch', path: p });
    if (res.status === 404) {
      log('error', 'network', `GET /${p} 404 (Not Found)`);
      return new Response('Not Found', { status: 404, statusText: 'Not Found', headers: { 'content-type': 'text/plain' } });
    }
    return new Response(method === 'HEAD' ? null : res.bytes, { status: 200, statusText: 'OK', headers: { 'content-type': res.mime } });
  };
  // XMLHttpRequest GETs of project files, answered like fetch() (async only: a sync XHR cannot wait for the host).
  const xhrOpen = XMLHttpRequest.prototype.open;
  const xhrSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url, async = true, ...rest) {
    let p = null;
    try { p = pathOf(new URL(String(url), document.baseURI)); } catch { /* not ours */ }
    this.__pooledPath = p !== null && String(method).toUpperCase() === 'GET' ? p : null;
    if (this.__pooledPath !== null && async === false) {
      log('error', 'network', `synchronous XMLHttpRequest of /${p} is not supported by the preview: use fetch()`);
    }
    return xhrOpen.call(this, method, url, async, ...rest);
  };
  XMLHttpRequest.prototype.send = function (body) {
    const p = this.__pooledPath;
    if (p === null || p === undefined) return xhrSend.call(this, body);
    request({ t: 'fetch', path: p }).then((res) => {
      const ok = res.status !== 404;
      if (!ok) log('error', 'network', `GET /${p} 404 (Not Found)`);
      const bytes = ok ? new Uint8Array(res.bytes) : new TextEncoder().encode('Not Found');
      const text = new TextDecoder().decode(bytes);
      const type = this.responseType;
      const response = type === 'arraybuffer' ? bytes.buffer : type === 'blob' ? new Blob([bytes], { type: res.mime })
        : type === 'json' ? (() => { try { return JSON.parse(text); } catch { return null; } })() : text;
      const props = { readyState: 4, status: ok ? 200 : 404, statusText: ok ? 'OK' : 'Not Found', response, responseURL: virtualUrl(p) };
      if (type === '' || type === 'text') props.responseText = text;
      for (const [k, v] of Object.entries(props)) Object.defineProperty(this, k, { configurable: true, value: v });
      for (const name of ['readystatechange', 'load', 'loadend']) this.dispatchEvent(new ProgressEvent(name));
    });
  };
  const patchUrlSetter = (proto, prop, what) => {
    const d = Object.getOwnPropertyDescriptor(proto, prop);
    if (!d || !d.set) return;
    Object.defineProperty(proto, prop, {
      ...d,
      set(value) {
        const mapped = typeof value === 'string' ? mapRef(value, document.baseURI, what) : undefined;
        d.set.call(this, mapped ?? value);
      },
    });
  };
  patchUrlSetter(HTMLImageElement.prototype, 'src', 'img');
  patchUrlSetter(HTMLMediaElement.prototype, 'src', 'media');
  patchUrlSetter(HTMLScriptElement.prototype, 'src', 'script');
  patchUrlSetter(HTMLLinkElement.prototype, 'href', 'link');
  patchUrlSetter(HTMLSourceElement.prototype, 'src', 'source');
  const realSetAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    const n = String(name).toLowerCase();
    if ((n === 'src' || (n === 'href' && this instanceof HTMLLinkElement)) && !(this instanceof HTMLAnchorElement)) {
      const mapped = mapRef(String(value), document.baseURI, this.tagName.toLowerCase());
      if (mapped !== undefined) value = mapped;
    }
    return realSetAttribute.call(this, name, value);
  };

  // ---- links: a page of the folder is served in place; #fragments scroll (the document is about:srcdoc) ----
  addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href]') : null;
    if (!a || e.defaultPrevented || (a.target && a.target !== '_self')) return;
    let abs;
    try { abs = new URL(a.getAttribute('href'), document.baseURI); } catch { return; }
    const p = pathOf(abs);
    if (p === null) return; // leaves the preview: let the browser refuse or open it
    e.preventDefault();
    if (p === M.page && abs.hash) {
      const target = document.getElementById(decodeURIComponent(abs.hash.slice(1)));
      if (target) target.scrollIntoView();
      return;
    }
    send({ t: 'navigate', path: p });
  });

  // ---- run_js --------------------------------------------------------------------------------------
  function onHostMessage(e) {
    const m = apply(dataOf, e, []);
    if (!m || typeof m !== 'object') return;
    if (m.t === 'reply' && waiters.has(m.id)) {
      const resolve = waiters.get(m.id);
      waiters.delete(m.id);
      resolve(m);
    } else if (m.t === 'ping') {
      storage.flush(); // the host pings before it replaces the frame: storage writes arrive first
      send({ t: 'pong', id: m.id });
    } else if (m.t === 'run' && typeof m.code === 'string') {
      const url = apply(makeUrl, URL, [new BlobOf([m.code], { type: 'text/javascript' })]);
      blobToPath.set(url, 'run_js');
      currentRun = m.run;
      send({ t: 'run-start', run: m.run });
      // import() is syntax and `then` is the one captured above: the page cannot turn a failure into success.
      apply(then, import(url), [
        () => { currentRun = 0; send({ t: 'run-done', run: m.run, ok: true }); },
        (err) => {
          currentRun = 0;
          let text;
          try { text = err instanceof Error ? `${err.name}: ${err.message}` : show(err); } catch { text = 'an error that cannot be shown'; }
          send({ t: 'run-done', run: m.run, ok: false, error: withPaths(String(text)) });
        },
      ]);
    }
  }

  // ---- the page ------------------------------------------------------------------------------------
  const imports = {};
  for (const path of Object.keys(M.files)) {
    if (/\.(m?js|cjs|jsx?|tsx?|mts)$/.test(path)) imports[virtualUrl(path)] = blobFor(path);
  }
  for (const url of M.missing) imports[url] = dead;
  addEventListener('load', () => send({ t: 'loaded' }));

  const pageUrl = virtualUrl(M.page);
  const pageFile = M.files[M.page];
  if (!pageFile || pageFile.text === undefined) {
    report404(M.page, 'the page itself');
    document.write(`<base href="${pageUrl}"><p style="font:16px system-ui;padding:1rem">404: /${M.page.replace(/[<&]/g, '')} is not in the served folder.</p>`);
    return;
  }
  const doc = new DOMParser().parseFromString(pageFile.text, 'text/html');
  const inPage = (tag) => `${tag} in ${M.page}`;
  const walkModule = (path, from, seen) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imp of (M.files[path] && M.files[path].imports) || []) {
      if (!imp.found) report404(imp.path, `imported by ${path}`);
      else walkModule(imp.path, path, seen);
    }
  };
  const rewriteCssText = (css, base) =>
    css.replace(/url\(\s*(["']?)([^"')]+)\1\s*\)/g, (whole, _q, ref) => {
      if (ref.startsWith('data:') || ref.startsWith('#')) return whole;
      const mapped = mapRef(ref, base, `url() in ${M.page}`);
      return mapped === undefined ? whole : `url("${mapped}")`;
    });
  const ATTRS = [
    ['script[src]', 'src'], ['img[src]', 'src'], ['source[src]', 'src'], ['video[src]', 'src'], ['video[poster]', 'poster'],
    ['audio[src]', 'src'], ['track[src]', 'src'], ['input[src]', 'src'], ['embed[src]', 'src'], ['object[data]', 'data'],
    ['link[href]', 'href'],
  ];
  const moduleSeen = new Set();
  for (const [selector, attr] of ATTRS) {
    for (const el of doc.querySelectorAll(selector)) {
      const tag = el.tagName.toLowerCase();
      const before = el.getAttribute(attr);
      let abs = null;
      try { abs = new URL(before, pageUrl); } catch { /* leave it */ }
      const mapped = mapRef(before, pageUrl, inPage(tag === 'link' ? `<link rel=${el.getAttribute('rel') || ''}>` : `<${tag}>`));
      if (mapped === undefined) continue;
      el.setAttribute(attr, mapped);
      const p = abs && pathOf(abs);
      if (tag === 'script' && el.getAttribute('type') === 'module' && p && M.files[p]) walkModule(p, M.page, moduleSeen);
      if (tag === 'link' && p && M.files[p] && M.files[p].refs) {
        for (const ref of M.files[p].refs) if (!ref.found) report404(ref.path, `url() in ${p}`);
      }
    }
  }
  for (const el of doc.querySelectorAll('style')) el.textContent = rewriteCssText(el.textContent, pageUrl);
  for (const el of doc.querySelectorAll('[style]')) el.setAttribute('style', rewriteCssText(el.getAttribute('style'), pageUrl));
  for (const a of doc.documentElement.attributes) document.documentElement.setAttribute(a.name, a.value);

  const importMap = JSON.stringify({ imports }).replace(/</g, '\\u003c');
  const bodyAttrs = [...doc.body.attributes].map((a) => ` ${a.name}="${a.value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`).join('');
  document.write(
    `<script type="importmap">${importMap}</scr` + `ipt><base href="${pageUrl}">` + doc.head.innerHTML +
    `<body${bodyAttrs}>` + doc.body.innerHTML + '</body>',
  );
})();
