// Preview harness: a PreviewHost over in-memory files (or, with ?files=node, over the Node side's folder
// through functions the headless driver exposes), shown in the preview pane, driven through window.pv.
import { MemoryFiles } from '../src/agent/files/memory.ts';
import type { FileEntry, ProjectFiles } from '../src/agent/files/types.ts';
import { esbuildTranspile } from '../src/preview/esbuild.ts';
import { PreviewHost } from '../src/preview/host.ts';
import { createPreviewTools } from '../src/preview/tools.ts';
import type { PreviewPane } from '../src/ui/preview-pane.ts';
import '../src/ui/preview-pane.ts';

/** ProjectFiles whose every call goes to Node (page.exposeFunction('__pooledFiles', …) in headless.ts). */
class NodeBridgeFiles implements ProjectFiles {
  private call = (op: string, ...args: unknown[]) =>
    (window as unknown as { __pooledFiles(op: string, args: unknown[]): Promise<unknown> }).__pooledFiles(op, args);
  list(dir: string) { return this.call('list', dir) as Promise<FileEntry[]>; }
  allFiles() { return this.call('allFiles') as Promise<string[]>; }
  readText(path: string) { return this.call('readText', path) as Promise<string | null>; }
  async readBytes(path: string) {
    const b64 = (await this.call('readBase64', path)) as string | null;
    return b64 === null ? null : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  }
  async write(): Promise<void> { throw new Error('the headless preview reads files only'); }
  async remove(): Promise<void> { throw new Error('the headless preview reads files only'); }
  onChange() { return () => {}; }
}

const params = new URLSearchParams(location.search);
const files: ProjectFiles = params.get('files') === 'node' ? new NodeBridgeFiles() : new MemoryFiles();
const host = new PreviewHost({ files, transpile: esbuildTranspile });
const tools = createPreviewTools(host);
const pane = document.querySelector('pooled-preview-pane') as PreviewPane;
pane.preview = host;

async function tool(name: string, args: Record<string, unknown> = {}) {
  const t = tools.find((x) => x.schema.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t.run(args, {});
}

/** PreviewApi methods for the headless driver: errors come back by name instead of as thrown strings. */
async function call(method: 'serve' | 'logs' | 'runJs' | 'served' | 'restore', args: unknown[]) {
  try {
    const fn = host[method] as (...a: unknown[]) => Promise<unknown>;
    return { ok: true, value: (await fn.apply(host, args)) ?? null };
  } catch (e) {
    const err = e as Error;
    return { ok: false, name: err?.name ?? 'Error', message: err?.message ?? String(e) };
  }
}

Object.assign(window, { pv: { files, host, tools, tool, call, pane, PreviewHost } });
document.body.dataset.ready = 'true';
