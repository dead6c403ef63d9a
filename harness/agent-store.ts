// The agent's browser-only parts, for e2e/agent-store.test.ts: project files in IndexedDB, the session
// store, and search running its regex in a Web Worker (a runaway pattern must not freeze the tab).
import { IdbFiles } from '../src/agent/files/idb.ts';
import { IdbSessionStore } from '../src/agent/session-store.ts';
import { createFileTools } from '../src/agent/tools/file-tools.ts';
import { ToolRegistry } from '../src/agent/tools/registry.ts';

const api = {
  async write(project: string, path: string, content: string): Promise<void> {
    const files = await IdbFiles.open(project);
    try { await files.write(path, content); } finally { files.close(); }
  },
  async read(project: string, path: string): Promise<string | null> {
    const files = await IdbFiles.open(project);
    try { return await files.readText(path); } finally { files.close(); }
  },
  async listing(project: string): Promise<{ root: string[]; all: string[] }> {
    const files = await IdbFiles.open(project);
    try {
      return { root: (await files.list('')).map((e) => `${e.kind}:${e.name}:${e.size}`), all: await files.allFiles() };
    } finally { files.close(); }
  },
  async remove(project: string, path: string): Promise<void> {
    const files = await IdbFiles.open(project);
    try { await files.remove(path); } finally { files.close(); }
  },
  /** The error's name and message, or null when the call succeeded. */
  async tryWrite(project: string, path: string): Promise<string | null> {
    const files = await IdbFiles.open(project);
    try { await files.write(path, 'x'); return null; } catch (e) { return `${(e as Error).name}: ${(e as Error).message}`; } finally { files.close(); }
  },
  /** Runs a search tool call; counts main-thread timer ticks meanwhile (a frozen tab would count none). */
  async search(project: string, pattern: string): Promise<{ ok: boolean; text: string; ms: number; ticks: number }> {
    const files = await IdbFiles.open(project);
    const tools = new ToolRegistry(createFileTools(files));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 50);
    const started = performance.now();
    const out = await tools.get('search')!.run({ pattern }, {});
    clearInterval(timer);
    files.close();
    return { ok: out.ok, text: out.ok ? out.text : out.error, ms: performance.now() - started, ticks };
  },
  async saveSession(project: string, note: string): Promise<void> {
    const store = await IdbSessionStore.open();
    await store.save(project, { version: 1, model: 'm', requests: 1, segments: [], timeline: [{ kind: 'request', request: 0, text: note }], servedPorts: [{ port: 5173, path: '' }], savedAt: 1 });
    store.close();
  },
  async loadSession(project: string): Promise<unknown> {
    const store = await IdbSessionStore.open();
    const data = await store.load(project);
    store.close();
    return data;
  },
};

(window as unknown as { __agentStore: typeof api }).__agentStore = api;
document.getElementById('ready')!.hidden = false;
