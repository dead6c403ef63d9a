// CORS for the endpoint: closed unless configured. A request whose Origin is allowed gets
// Access-Control-Allow-Origin (and its preflight an answer); any other gets no Access-Control-* header at
// all, so a page on another origin cannot read a reply even if it knows a key. Non-browser clients send
// no Origin and are not affected; neither are they by the isolation headers (COOP/COEP matter only to
// browsing contexts).
import type { NextFunction, Request, Response } from 'express';

/** Request headers a preflight may ask for: header names only (the openai client asks for its x-stainless-* ones). */
const HEADER_LIST = /^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/;

export function apiCors(origins: ReadonlySet<string>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    res.vary('Origin');
    const allowed = typeof origin === 'string' && (origins.has('*') || origins.has(origin));
    if (allowed) {
      res.setHeader('Access-Control-Allow-Origin', origins.has('*') ? '*' : origin);
      res.setHeader('Access-Control-Expose-Headers', 'Content-Type');
    }
    if (req.method !== 'OPTIONS') { next(); return; }
    if (!allowed) { res.status(403).type('text/plain').send('origin not allowed'); return; }
    const asked = String(req.headers['access-control-request-headers'] ?? '');
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', asked.length <= 2000 && HEADER_LIST.test(asked) ? asked : 'Authorization, Content-Type');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}
