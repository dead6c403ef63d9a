// Sessions (docs/agent.md, Sessions): per project, the agent's conversation with the exact tokens the model
// sampled, the timeline (last 200 items) and the served ports. Reopening continues without re-encoding
// anything, unless the model changed: then every turn is encoded again from its text.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { Backend } from './backend.ts';
import type { Segment } from './conversation.ts';
import type { RestoredState } from './loop.ts';
import type { ServedPort } from './tool-types.ts';
import type { Agent } from './loop.ts';
import { TIMELINE_LIMIT, type TimelineItem } from './timeline.ts';
import { salvageSession, validateSession } from './session-validate.ts';

export const SESSION_VERSION = 1;

export interface SessionData {
  version: number;
  model: string;               // Backend.name of the model the tokens came from
  requests: number;
  segments: Segment[];
  timeline: TimelineItem[];
  servedPorts: ServedPort[];
  savedAt: number;             // ms since epoch
}

/** A stored session that cannot be read back (wrong version or shape). Names the project. */
export class SessionFormatError extends Error {
  override name = 'SessionFormatError';
  constructor(readonly projectId: string, detail: string) {
    super(`the saved agent session of project ${JSON.stringify(projectId)} cannot be read: ${detail}`);
  }
}

export interface SessionStore {
  load(projectId: string): Promise<SessionData | null>;
  save(projectId: string, data: SessionData): Promise<void>;
  clear(projectId: string): Promise<void>;
  /**
   * Moves the project's stored session (one that cannot be read back) out of the way, kept under a new
   * name that is returned, so a fresh session can start without losing it. null: nothing was stored.
   */
  setAside(projectId: string): Promise<string | null>;
}

/** The name a set-aside session is kept under: "<project>.unreadable-<ISO time>". */
export function setAsideName(projectId: string, now = new Date()): string {
  return `${projectId}.unreadable-${now.toISOString().replace(/[:.]/g, '-')}`;
}

export function snapshotSession(agent: Agent, model: string): SessionData {
  return {
    version: SESSION_VERSION,
    model,
    requests: agent.requests,
    segments: structuredClone(agent.conversation.segments),
    timeline: structuredClone(agent.timeline.items.slice(-TIMELINE_LIMIT)),
    servedPorts: agent.servedPorts.map((p) => ({ ...p })),
    savedAt: Date.now(),
  };
}

/**
 * The state to pass as AgentOptions.restore. Same model: the exact tokens as saved. Another model:
 * each turn's tokens encoded again from its text (and reported, so the UI can say so).
 */
export function restoreSession(projectId: string, stored: SessionData, backend: Backend): RestoredState & { reencoded: boolean } {
  const data = validateSession(projectId, stored); // every field, so nothing malformed reaches the Agent
  const reencoded = data.model !== backend.name;
  const segments = structuredClone(data.segments).map((s) => (reencoded ? { ...s, tokens: backend.encode(s.text) } : s));
  return { segments, timeline: data.timeline.slice(-TIMELINE_LIMIT), requests: data.requests, servedPorts: data.servedPorts ?? [], reencoded };
}

export class MemorySessionStore implements SessionStore {
  private sessions = new Map<string, string>();
  async load(projectId: string): Promise<SessionData | null> {
    const json = this.sessions.get(projectId);
    return json ? (JSON.parse(json) as SessionData) : null;
  }
  async save(projectId: string, data: SessionData): Promise<void> {
    this.sessions.set(projectId, JSON.stringify(data));
  }
  async clear(projectId: string): Promise<void> {
    this.sessions.delete(projectId);
  }
  async setAside(projectId: string): Promise<string | null> {
    const json = this.sessions.get(projectId);
    if (json === undefined) return null;
    const name = setAsideName(projectId);
    this.sessions.set(name, json);
    this.sessions.delete(projectId);
    return name;
  }
  /** The raw stored text under a name (tests: what was set aside). */
  raw(name: string): string | undefined {
    return this.sessions.get(name);
  }
  /** Stores anything under a project id, valid or not (tests: what an old build or a crash left behind). */
  putRaw(projectId: string, value: unknown): void {
    this.sessions.set(projectId, JSON.stringify(value));
  }
  /** Stores text as it is, JSON or not. */
  putRawText(projectId: string, text: string): void {
    this.sessions.set(projectId, text);
  }
}

interface SessionSchema extends DBSchema {
  sessions: { key: string; value: unknown };   // whatever is there: load() does not trust it
}

/** In the host's browser: database "pooled-sessions", one record per project id. */
export class IdbSessionStore implements SessionStore {
  private constructor(private readonly db: IDBPDatabase<SessionSchema>) {}

  static async open(): Promise<IdbSessionStore> {
    const db = await openDB<SessionSchema>('pooled-sessions', 1, {
      upgrade(database) {
        database.createObjectStore('sessions');
      },
    });
    return new IdbSessionStore(db);
  }
  async load(projectId: string): Promise<SessionData | null> {
    return ((await this.db.get('sessions', projectId)) as SessionData | undefined) ?? null;
  }
  async save(projectId: string, data: SessionData): Promise<void> {
    await this.db.put('sessions', data, projectId);
  }
  async clear(projectId: string): Promise<void> {
    await this.db.delete('sessions', projectId);
  }
  async setAside(projectId: string): Promise<string | null> {
    const tx = this.db.transaction('sessions', 'readwrite');
    const value = await tx.store.get(projectId);
    if (value === undefined) { await tx.done; return null; }
    const name = setAsideName(projectId);
    await tx.store.put(value, name);
    await tx.store.delete(projectId);
    await tx.done;
    return name;
  }
  close(): void {
    this.db.close();
  }
}

export interface OpenedSession {
  restored?: RestoredState & { reencoded: boolean };
  /** Set when the stored session could not be used: what was wrong and where it was kept; the user is told. */
  problem?: string;
}

/**
 * The project's saved session, ready for AgentOptions.restore. One that cannot be read (not JSON, an
 * old or broken shape) is set aside under a new name, kept for a person to look at; when only some timeline
 * cards are unreadable the conversation is restored without them, otherwise the agent starts a new session.
 * The project's files are never touched.
 */
export async function openSession(store: SessionStore, projectId: string, backend: Backend): Promise<OpenedSession> {
  let saved: SessionData | null = null;
  try {
    saved = await store.load(projectId);
    return saved ? { restored: restoreSession(projectId, saved, backend) } : {};
  } catch (e) {
    const salvaged = e instanceof SessionFormatError && saved ? salvageSession(projectId, saved) : null;
    if (!salvaged) return { problem: await setAsideBecause(store, projectId, e as Error) };
    const name = await store.setAside(projectId).catch(() => null);
    await store.save(projectId, salvaged.data).catch(() => undefined); // a reload before the next save finds it too
    const kept = name ? `the saved session was kept as ${JSON.stringify(name)}` : 'the saved session could not be copied aside';
    const cards = salvaged.dropped === 1 ? '1 timeline card' : `${salvaged.dropped} timeline cards`;
    return {
      restored: restoreSession(projectId, salvaged.data, backend),
      problem: `${cards} could not be read (${(e as Error).message.replace(/^.*cannot be read: /, '')}) and ${salvaged.dropped === 1 ? 'was' : 'were'} left out; the conversation is restored and ${kept}.`,
    };
  }
}

/** Sets the stored session aside and says so in one sentence for the user. */
export async function setAsideBecause(store: SessionStore, projectId: string, e: Error): Promise<string> {
  const name = await store.setAside(projectId).catch(() => null);
  const kept = name ? `it was kept as ${JSON.stringify(name)}` : 'it could not be moved aside';
  return `${e.name}: ${e.message}. ${kept} and a new session started; the project's files are untouched.`;
}
