// src/preview — the agent's preview: serve a project folder as a static site, read its console, run_js.
//
// DESIGN DECISION (how a sandboxed page sees the project's files, tested in Chromium 156):
// * Each served port is an <iframe sandbox="allow-scripts" srcdoc=…> (in a shell, below): an opaque origin, so the page can
//   never read the app's IndexedDB, localStorage, cookies or DOM (e2e/preview.test.ts tries each).
// * Storage: in an opaque origin the browser's localStorage and sessionStorage throw SecurityError, and
//   the todo lists and theme toggles the agent builds would fail on code with no bug. So the runtime
//   puts its own Storage on the page (frame-storage.js: the real API, named properties, string values,
//   QuotaExceededError past 5 Mi UTF-16 code units, as browsers allow an origin) before any page script
//   runs. The host keeps each port's contents (storage.ts: a port is the page's origin, as on a dev
//   server) for as long as it lives, checks every batch of changes a frame reports and holds an area to
//   its quota whatever the frame says, and puts the contents in each new frame's manifest. Before it
//   replaces a frame it pings it, and the frame sends its pending writes before the pong. A page's own
//   reload would run the first srcdoc again (its files and storage as they were), so the runtime sees a
//   reload (the navigation entry) and asks the host to serve the page afresh instead; a page reloading
//   over and over is stopped after a burst of 5 (then one every 2 s). IndexedDB gets no stand-in (an
//   in-memory IndexedDB is a large API to fake, and would forget everything on reload anyway): its
//   open() throws a SecurityError saying so and pointing to localStorage. Neither persists past the app's
//   tab; writes made before the frame's bridge connects are lost if the page reloads itself at once.
//   Chromium puts sandboxed frames in their own renderer process (IsolateSandboxedIframes), so an endless
//   loop in the page does not freeze the host tab. That process is shared by ALL our sandboxed frames (one
//   per site of the app), so a loop in one port stalls every port, and the process only goes when no frame
//   is left in it. So run_js's 3 s timeout removes every frame and serves each port again (a fresh process
//   answers within ~0.3-1 s, measured), and serve first pings the frames and restarts a stuck sandbox,
//   dropping a page that never finished loading (the likely looper).
// * A service worker cannot serve it: opaque-origin frames are never controlled by one, and the app has
//   one origin. A second origin would need a second host name in every deployment.
// * Instead the host reads the folder's CURRENT files when serve runs (manifest.ts), rewrites only the
//   text of module specifiers and CSS url()s to virtual URLs http://pooled-preview.invalid:P/path (no
//   line moves, so error positions match the agent's files), and inlines them as JSON into the srcdoc.
//   frame-runtime.js, the srcdoc's first script, makes a blob: URL per file, an import map from each
//   virtual module URL to its blob (imports between modules, cycles included, resolve to one instance),
//   rewrites the page's HTML to the blobs and document.write()s it while the srcdoc is still parsing
//   (same realm: its console/error hooks stay; classic scripts run in order; DOMContentLoaded fires).
//   fetch() of project files goes live to the host over a MessageChannel (so it sees current files).
//   TypeScript/JSX go through esbuild-wasm (esbuild.ts, loaded only when such a file is served).
// * The frame sits in a shell (frame-shell.ts): an about:blank iframe of the app's origin whose only
//   content is <base href="http://pooled-preview.invalid:P/">. A srcdoc document falls back to its
//   container's base URL, so without the shell a page that removes its <base> reads the app's full
//   address (the room id is in it) from document.baseURI. srcdoc, not blob:, so location.reload() works.
// * The bridge: the frame says hello with a per-frame token; the host answers only a hello whose source
//   is that frame's own contentWindow, with a MessagePort; every later message is checked field by field.
//   A second hello from the same frame (its page reloaded itself) gets a fresh channel. The page shares
//   the runtime's realm and may be hostile: the runtime captures every builtin the bridge uses before
//   any page script runs, and takes the port out of the message event before the page's listeners run.
// * Open in a new tab (PreviewHost.openInTab): public/preview-tab.html, of the app's origin, opened with
//   window.open so its opener is the app. It asks the opener for its port's page when it loads (again
//   after a reload); the host builds the same shell + sandboxed frame in it and listens for that frame's
//   hello on the tab's window (the frame talks to parent.parent, which is now the tab). Its file reads,
//   storage writes and links go through the host as the pane's do; its console stays in the tab. Every
//   serve of that port replaces the tab's frame too (a rebuild shows there without a reload).
// * A flood: the runtime batches console lines (one message per 50 ms) and sends at most 500 a second
//   after a burst of 1,000, counting the rest; the host keeps a ring of 2,000 lines per port, caps each
//   page at 1,000 lines a second, says how many were dropped, and the pane redraws once per frame.
export { PreviewHost, type PreviewHostOptions } from './host.ts';
export { createPreviewTools, formatLogs, formatRun, formatServe } from './tools.ts';
export * from './types.ts';
