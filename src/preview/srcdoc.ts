// The srcdoc of a preview frame: the manifest as inert JSON, then the frame runtime (frame-runtime.js,
// with frame-storage.js spliced into its closure), which document.write()s the real page after it.
// Browser build only (imports the runtime as text).
import runtime from './frame-runtime.js?raw';
import storage from './frame-storage.js?raw';
import type { FrameManifest } from './manifest.ts';

export function frameSrcdoc(manifest: FrameManifest, token: string): string {
  // '<' escaped so no "</script>" inside a file can close the JSON element early.
  const json = JSON.stringify(manifest).replace(/</g, '\\u003c');
  const code = runtime.replace('/*__POOLED_STORAGE__*/', () => storage).replaceAll('__POOLED_TOKEN__', token).replace(/<\/script/gi, '<\\/script');
  return `<!doctype html><html><head><meta charset="utf-8">` +
    `<script type="application/json" id="__pooled_manifest">${json}</script>` +
    `<script>${code}</script></head></html>`;
}
