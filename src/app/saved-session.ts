// The agent session of a project, kept in the host's IndexedDB so a reload brings it back: the
// conversation's exact token segments (only reused when the room runs the same model), the timeline
// (last 200 items), the request count, and the served ports. The files live in their own store (IdbFiles).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { Segment } from '../agent/conversation.ts';
import type { TimelineItem } from '../agent/timeline.ts';
import type { ServedPort as AgentServedPort } from '../agent/loop.ts';
import type { ServedPort as PreviewServedPort } from '../preview/types.ts';

export interface SavedSession {
  modelKey: string;            // the conversation's tokens belong to this model
  segments: Segment[];
  timeline: TimelineItem[];
  requests: number;
  servedPorts: AgentServedPort[];
  previewPorts: PreviewServedPort[];
  askFirst: boolean;
  savedAt: number;
}

interface SessionSchema extends DBSchema {
  sessions: { key: string; value: SavedSession };
}

const DB_NAME = 'pooled-sessions';

export class SessionSaveError extends Error {
  override name = 'SessionSaveError';
  readonly code = 'session-save';
}

export class SavedSessions {
  private db: Promise<IDBPDatabase<SessionSchema>> | undefined;

  private open(): Promise<IDBPDatabase<SessionSchema>> {
    this.db ??= openDB<SessionSchema>(DB_NAME, 1, { upgrade: (db) => { db.createObjectStore('sessions'); } });
    return this.db;
  }

  async load(projectId: string): Promise<SavedSession | undefined> {
    return (await this.open()).get('sessions', projectId);
  }

  async save(projectId: string, session: SavedSession): Promise<void> {
    try {
      // Structured clone of plain data: copy so later in-place edits by the agent cannot race the write.
      await (await this.open()).put('sessions', JSON.parse(JSON.stringify(session)) as SavedSession, projectId);
    } catch (e) {
      throw new SessionSaveError(`project "${projectId}": the session could not be saved (${(e as Error).message})`);
    }
  }
}
