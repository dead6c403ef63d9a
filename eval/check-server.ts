// Serves one task's project folder on 127.0.0.1 so its check opens the page from a real origin
// (localStorage and reloads behave as on a user's site). The page was written by a model, so the origin
// is its own and walled in: a fresh port per check (nothing else ever lived on that origin, and the
// check's browser context is fresh: no cookies, no storage), and a Content-Security-Policy on every
// response that lets the page load and talk to this origin only. Without it a page could fetch any other
// loopback service (a llama.cpp server answers `Access-Control-Allow-Origin: *`) and read the reply.
import http from 'node:http';
import express from 'express';

/**
 * What an eval page may do: scripts and styles inline or from here (eval() too: small apps use it),
 * images, fonts and media from here or data:/blob:, and requests (fetch, XHR, WebSocket, EventSource,
 * beacons) to this origin only; no forms posted elsewhere, no <base> elsewhere, no framing by others.
 * A meta CSP in the page can only add to this, never lift it.
 */
export const CHECK_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data:",
  "style-src 'self' 'unsafe-inline' blob: data:",
  "img-src 'self' blob: data:",
  "font-src 'self' blob: data:",
  "media-src 'self' blob: data:",
  "worker-src 'self' blob:",
  "frame-src 'self' blob: data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'self'",
  "frame-ancestors 'self'",
].join('; ');

export interface CheckServer {
  url: string;                 // http://127.0.0.1:PORT/
  close(): Promise<void>;
}

export async function serveFolder(folder: string): Promise<CheckServer> {
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', CHECK_PAGE_CSP);
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    next();
  });
  app.use(express.static(folder, { index: 'index.html', dotfiles: 'ignore', etag: false, lastModified: false, cacheControl: false }));
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
