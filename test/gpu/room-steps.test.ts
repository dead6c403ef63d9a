// A room whose devices take different prefill steps (README, "The prefill step"): the host's WebGPU engine
// reports 4 tokens a step, the guest's 16; the deal gives each its own (assign carries it), each engine
// runs at exactly that step, and a prompt longer than both (40 tokens, forwarded whole: no micro-chunks)
// gives the same greedy tokens as one device holding everything.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineRow, ShareRequest } from '../../src/engines/contract.ts';
import type { WebGPUEngine } from '../../src/gpu/engine.ts';
import { webgpuRow } from '../../src/gpu/engine-row.ts';
import { caps, makeRoom, singleDeviceTokens, tinyFiles, type TestRoom } from '../unit/room/helpers.ts';

const PROMPT = Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 500);
const N = 8;

/** The WebGPU row on the f32 path (exact against the reference on the tiny model), recording each load's request and engine. */
function recordingRow(loads: { request: ShareRequest; engine: WebGPUEngine }[]): EngineRow {
  const load = webgpuRow.loadShare({ f16: 'off' });
  return {
    ...webgpuRow,
    loadShare: () => async (request) => {
      const share = await load(request);
      if (share) loads.push({ request, engine: share.engine as WebGPUEngine });
      return share;
    },
  };
}

describe('a room whose devices take different prefill steps', () => {
  let files: Map<string, Uint8Array>;
  let expected: number[];
  let room: TestRoom | undefined;
  beforeAll(async () => {
    files = tinyFiles();
    expected = await singleDeviceTokens(files, PROMPT, N);
  });
  afterEach(async () => { await room?.close(); room = undefined; });

  it('host at 4 tokens a step, guest at 16: each engine runs its own step and the tokens are the unsplit ones', async () => {
    const hostLoads: { request: ShareRequest; engine: WebGPUEngine }[] = [];
    const guestLoads: { request: ShareRequest; engine: WebGPUEngine }[] = [];
    const hostRow = recordingRow(hostLoads);
    room = await makeRoom(files, {
      caps: { ...caps(), engine: 'webgpu', step: 4 }, loadShare: hostRow.loadShare({}), microChunk: 0,
    });
    room.addGuest('steps16', { engine: recordingRow(guestLoads), step: 16 });
    const until = async (cond: () => boolean) => { while (!cond()) await new Promise((r) => setTimeout(r, 5)); };
    await until(() => room!.host.deviceList().length === 2);
    await room.host.setManualDeal([{ deviceId: 'host', range: [0, 2] }, { deviceId: 'steps16', range: [2, 4] }]);
    const r = await room.host.generate(PROMPT, { maxNewTokens: N });
    expect(r.ids).toEqual(expected);
    // The deal's step reached each engine (assign for the guest), and each engine runs at it.
    const host = hostLoads.at(-1)!, guest = guestLoads.at(-1)!;
    expect([host.request.step, guest.request.step]).toEqual([4, 16]);
    expect([host.engine.stats().maxBatch, guest.engine.stats().maxBatch]).toEqual([4, 16]);
    // The guest's layers ran the 40-token prompt in 16 + 16 + 8 (more than one step a forward).
    expect(guest.engine.kvLength()).toBe(PROMPT.length + N - 1);
  }, 240_000);   // two WebGPU engines' pipelines on lavapipe (tuning 'auto' times candidates once per adapter) on a busy 2-core box
});
