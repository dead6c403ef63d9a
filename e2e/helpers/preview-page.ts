// Opens harness/preview.html and drives its window.pv (PreviewHost + the three agent tools) by strings,
// so no test function is serialized into the page (see docs/platform.md on __name).
import type { BrowserContext, Page } from 'playwright-core';
import { deflateSync } from 'node:zlib';

export interface ToolResult { ok: boolean; text?: string; error?: string }

export async function openPreviewHarness(context: BrowserContext, baseUrl: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${baseUrl}/harness/preview.html`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  return page;
}

/** Writes text files (and base64 files, as { base64 }) into the harness's in-memory project. */
export async function writeProject(page: Page, files: Record<string, string | { base64: string }>): Promise<void> {
  await page.evaluate(`(async (files) => {
    for (const [path, content] of Object.entries(files)) {
      const data = typeof content === 'string' ? content : Uint8Array.from(atob(content.base64), (c) => c.charCodeAt(0));
      await window.pv.files.write(path, data);
    }
  })(${JSON.stringify(files)})`);
}

export async function callTool(page: Page, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await page.evaluate(`window.pv.tool(${JSON.stringify(name)}, ${JSON.stringify(args)})`)) as ToolResult;
}

/** The text a tool gave back, success or not. */
export function textOf(r: ToolResult): string {
  return [r.error, r.text].filter(Boolean).join('\n');
}

/** A solid-colour RGB PNG (real encoder: signature, IHDR, zlib IDAT, IEND with CRCs). */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; ihdr[9] = 2; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
