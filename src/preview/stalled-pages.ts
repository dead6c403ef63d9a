// Pages that stalled the preview sandbox (host.ts): all served frames share one process, so a page that
// loops (while loading, or right after its load event) stalls every port, and serving it again as it is
// would stall the fresh process too, each later serve paying a ping timeout and a restart. Such a page is
// remembered by what it is made of (its manifest's files); serve refuses it, saying why, until they change.
import type { FrameManifest } from './manifest.ts';

/** The page's content as served: its files (after rewriting), its missing imports and which page opens. */
export async function manifestFingerprint(m: FrameManifest): Promise<string> {
  const text = JSON.stringify({ page: m.page, files: m.files, missing: m.missing });
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export class StalledPages {
  private readonly stalled = new Map<string, { fingerprint: string; why: string }>();

  private static key(folder: string, page: string): string { return `${folder}\n${page}`; }

  /** The page `folder/page` as it is now (`fingerprint`) stalled the sandbox because `why`. */
  mark(folder: string, page: string, fingerprint: string, why: string): void {
    this.stalled.set(StalledPages.key(folder, page), { fingerprint, why });
  }

  /** Why `folder/page` is not served, when its files are still those that stalled the sandbox; else null (and forgotten once changed). */
  refusal(folder: string, page: string, fingerprint: string): string | null {
    const key = StalledPages.key(folder, page);
    const s = this.stalled.get(key);
    if (!s) return null;
    if (s.fingerprint !== fingerprint) { this.stalled.delete(key); return null; }
    return `not served: unchanged since it stalled the preview sandbox (${s.why}); change its files (the loop), then serve it again`;
  }
}
