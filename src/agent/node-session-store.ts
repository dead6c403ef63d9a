// Node only (the CLI): sessions as JSON files in a folder, one per project id.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionData, SessionStore } from './session-store.ts';
import { SessionFormatError, setAsideName } from './session-store.ts';

export class NodeSessionStore implements SessionStore {
  constructor(private readonly dir: string) {}

  private file(projectId: string): string {
    return path.join(this.dir, `${encodeURIComponent(projectId)}.session.json`);
  }
  async load(projectId: string): Promise<SessionData | null> {
    let json: string;
    try {
      json = await readFile(this.file(projectId), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      return JSON.parse(json) as SessionData;
    } catch (e) {
      throw new SessionFormatError(projectId, `${this.file(projectId)} is not JSON (${(e as Error).message})`);
    }
  }
  async save(projectId: string, data: SessionData): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeFile(this.file(projectId), JSON.stringify(data));
  }
  async clear(projectId: string): Promise<void> {
    await rm(this.file(projectId), { force: true });
  }
  async setAside(projectId: string): Promise<string | null> {
    const target = this.file(setAsideName(projectId));
    try {
      await rename(this.file(projectId), target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    return target;
  }
}
