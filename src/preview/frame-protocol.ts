// Messages a preview frame sends the host over its MessageChannel. Everything from a frame is untrusted
// data: it is checked field by field here and only ever shown as text.
import { PREVIEW_LIMITS, type PreviewLogLine } from './types.ts';
import type { StorageAreaName } from './storage.ts';

export interface FrameLogLine { level: PreviewLogLine['level']; source: PreviewLogLine['source']; text: string; run: number }

export type FrameMessage =
  /** A batch of console lines, and how many the frame dropped since the last batch (a flood). */
  | { t: 'logs'; lines: FrameLogLine[]; dropped: number }
  | { t: 'loaded' }
  | { t: 'fetch'; id: number; path: string }
  | { t: 'navigate'; path: string }
  | { t: 'pong'; id: number }
  | { t: 'run-start'; run: number }
  | { t: 'run-done'; run: number; ok: boolean; error?: string }
  /** Changes to the page's localStorage or sessionStorage (value null: removed), after a clear when `clear`. */
  | { t: 'storage'; area: StorageAreaName; clear: boolean; changes: [string, string | null][] };

const LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);
const SOURCES = new Set(['console', 'error', 'rejection', 'network']); // 'system' lines come from the host only
const MAX_TEXT = 8_000;
/** The frame sends at most 200 lines a batch. */
export const MAX_BATCH = 500;

const isInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isText = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT;

export function isFrameMessage(m: unknown): m is FrameMessage {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  switch (o.t) {
    case 'logs': return Array.isArray(o.lines) && o.lines.length <= MAX_BATCH && o.lines.every(isLogLine) && isInt(o.dropped);
    case 'loaded': return true;
    case 'fetch': return isInt(o.id) && isText(o.path);
    case 'pong': return isInt(o.id);
    case 'navigate': return isText(o.path) && o.path.length <= 1000;
    case 'run-start': return isInt(o.run);
    case 'run-done': return isInt(o.run) && typeof o.ok === 'boolean' && (o.error === undefined || isText(o.error));
    case 'storage': return (o.area === 'local' || o.area === 'session') && typeof o.clear === 'boolean' && isStorageChanges(o.changes);
    default: return false;
  }
}

function isLogLine(l: unknown): l is FrameLogLine {
  if (!l || typeof l !== 'object') return false;
  const o = l as Record<string, unknown>;
  return LEVELS.has(o.level as string) && SOURCES.has(o.source as string) && isText(o.text) && isInt(o.run);
}

/**
 * At most storageBatch changes of [key, value or null]; all their text together at most twice the
 * quota (the removed keys and the current contents), so one message is never larger than that.
 */
function isStorageChanges(v: unknown): v is [string, string | null][] {
  if (!Array.isArray(v) || v.length > PREVIEW_LIMITS.storageBatch) return false;
  let chars = 0;
  for (const c of v) {
    if (!Array.isArray(c) || c.length !== 2 || typeof c[0] !== 'string' || (c[1] !== null && typeof c[1] !== 'string')) return false;
    chars += c[0].length + (c[1] === null ? 0 : c[1].length);
    if (chars > 2 * PREVIEW_LIMITS.storageChars) return false;
  }
  return true;
}
