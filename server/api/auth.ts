// API keys: the host tab makes one and shows it; a client sends it as `Authorization: Bearer KEY`.
// The server keeps only keys' SHA-256 digests and finds a host by digest, then compares digests in
// constant time, so how long an answer takes says nothing about how close a guessed key was.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { API_KEY_PATTERN } from '../../src/api/relay-wire.ts';

/** The digest a key is known by (hex of SHA-256). */
export type KeyDigest = string & { readonly __keyDigest: unique symbol };

export function keyDigest(key: string): KeyDigest {
  return createHash('sha256').update(key, 'utf8').digest('hex') as KeyDigest;
}

export function sameDigest(a: KeyDigest, b: KeyDigest): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** The digest of the bearer key a request carries, or null when it carries none of the right form. */
export function bearerDigest(headers: IncomingHttpHeaders): KeyDigest | null {
  const m = /^Bearer ([^\s]+)$/i.exec(String(headers.authorization ?? '').trim());
  return m && API_KEY_PATTERN.test(m[1]!) ? keyDigest(m[1]!) : null;
}
