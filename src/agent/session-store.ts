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
export function restoreSession(projectId: string, data: SessionData, backend: Backend): RestoredState & { reencoded: boolean } {
  if (data.version !== SESSION_VERSION) throw new SessionFormatError(projectId, `version ${data.version}, expected ${SESSION_VERSION}`);
  if (!Array.isArray(data.segments) || !Array.isArray(data.timeline)) throw new SessionFormatError(projectId, 'segments or timeline missing');
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
}

interface SessionSchema extends DBSchema {
  sessions: { key: string; value: SessionData };
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
    return (await this.db.get('sessions', projectId)) ?? null;
  }
  async save(projectId: string, data: SessionData): Promise<void> {
    await this.db.put('sessions', data, projectId);
  }
  async clear(projectId: string): Promise<void> {
    await this.db.delete('sessions', projectId);
  }
  close(): void {
    this.db.close();
  }
}
