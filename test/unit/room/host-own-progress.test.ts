// The host's own share shows its load as it goes, like a guest's: the room's 'devices' event carries the host
// device's bytes while they arrive (the card used to sit at 0% until the whole share was in).
import { expect, test } from 'vitest';
import type { DeviceInfo } from '../../../src/room/host.ts';
import { CountingMemorySource, makeRoom, tinyFiles } from './helpers.ts';

/** Each range read takes `ms`: a slow link, so the load spans several of the screen's refreshes. */
class SlowSource extends CountingMemorySource {
  constructor(files: Map<string, Uint8Array>, private readonly ms: number) { super(files); }
  override async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    await new Promise((r) => setTimeout(r, this.ms));
    return super.readRange(path, start, end);
  }
}

test('the host device reports bytes arriving during its own load, not only 0% then done', async () => {
  const files = tinyFiles();
  const room = await makeRoom(files, { source: new SlowSource(files, 40) });
  const seen: Pick<DeviceInfo, 'status' | 'bytesDone' | 'bytesTotal'>[] = [];
  room.host.on((e) => {
    if (e.type !== 'devices') return;
    const me = e.devices.find((d) => d.isHost);
    if (me) seen.push({ status: me.status, bytesDone: me.bytesDone, bytesTotal: me.bytesTotal });
  });
  try {
    await room.host.redeal();
    const midway = seen.filter((s) => s.status === 'loading' && s.bytesTotal > 0 && s.bytesDone > 0 && s.bytesDone < s.bytesTotal);
    expect(midway.length, `host device states seen: ${JSON.stringify(seen)}`).toBeGreaterThan(0);
    // Progress only moves forward, and the load ends whole.
    for (let i = 1; i < midway.length; i++) expect(midway[i]!.bytesDone).toBeGreaterThanOrEqual(midway[i - 1]!.bytesDone);
    const last = seen.at(-1)!;
    expect(last.status).toBe('ready');
    expect(last.bytesDone).toBe(last.bytesTotal);
  } finally {
    await room.close();
  }
}, 30_000); // a deliberately slow source: each read waits 40 ms on a busy 2-core machine
