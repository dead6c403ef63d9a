// The shared fixture of the API tests: a real startServer() on 127.0.0.1:0 (an empty built app beside
// it) with the limits a test chooses, and the real openai client pointed at it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startServer, type RunningServer } from '../../../server/app.ts';
import type { ApiOptions } from '../../../server/api/index.ts';

export interface ApiFixture { server: RunningServer; close(): Promise<void> }

export async function startApiServer(api: ApiOptions = {}): Promise<ApiFixture> {
  const root = mkdtempSync(path.join(tmpdir(), 'pooled-api-'));
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist', 'index.html'), '<!doctype html><title>pooled</title>');
  const server = await startServer({ port: 0, root, api });
  return { server, close: async () => { await server.close(); rmSync(root, { recursive: true, force: true }); } };
}

/** A fresh key of the form the host tab makes. */
export const newKey = (tag: string): string => `test_${tag}_`.padEnd(40, 'x');

/** The openai client as an editor would use it; no retries, so a 429 or 503 reaches the test. */
export function client(server: RunningServer, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });
}
