// Issue 37: a new engine is its row and one line in the table. A toy fourth row (the reference engine
// under another name, "toy") joins a room with nothing else: the host is handed a table with that one
// line more, the guest says "toy" in its hello and loads its share through the row's loadShare, and the
// split room gives one device's tokens. The deal asks the row for the guest's scratch. A host whose
// table lacks the row refuses the guest by name.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { EngineRow, EngineTable } from '../../../src/engines/contract.ts';
import { ENGINES } from '../../../src/engines/table.ts';
import { referenceRow } from '../../../src/model/reference/engine-row.ts';
import type { GuestEvent } from '../../../src/room/guest.ts';
import { shareTotal } from '../../../src/room/deal.ts';
import { dealRoom, hostDealCost } from '../../../src/room/host-deal.ts';
import { HostDevice } from '../../../src/room/host-device.ts';
import { caps, makeRoom, singleDeviceTokens, tinyFiles, until, type TestRoom } from './helpers.ts';

const PROMPT = [5, 17, 42, 9, 300];
const toyRow: EngineRow = { ...referenceRow, kind: 'toy', title: 'toy', lastResort: false };

describe('a fourth engine row', () => {
  let files: Map<string, Uint8Array>;
  let room: TestRoom | undefined;
  beforeAll(() => { files = tinyFiles(); });
  afterEach(async () => { await room?.close(); room = undefined; });

  test('joins a room with its row and one table line, loads its share itself and gives one device\'s tokens', async () => {
    const engines: EngineTable = { ...ENGINES, toy: toyRow };   // the one line
    room = await makeRoom(files, { engines });
    const guest = room.addGuest('toy111', { engine: toyRow });
    await until(() => room!.host.deviceList().length === 2, 'hello');
    expect(room.host.deviceList().map((d) => d.caps.engine)).toEqual(['reference', 'toy']);
    await room.host.redeal();
    const dealt = room.host.currentDeal.find((e) => e.deviceId === 'toy111');
    expect(dealt!.range[1]).toBeGreaterThan(dealt!.range[0]);
    expect(guest.stats.networkBytes).toBeGreaterThan(0);   // its share came through the room's cached source
    const out = await room.host.generate(PROMPT, { maxNewTokens: 16 });
    expect(out.ids).toEqual(await singleDeviceTokens(files, PROMPT, 16));
  });

  test('the deal asks each row for its scratch: a row that needs more is dealt fewer layers in the same memory', async () => {
    room = await makeRoom(files);
    const opts = room.host.opts;
    // A fast guest with memory for exactly two layers plus a reference device's scratch and load peak.
    const budget = shareTotal(hostDealCost(opts), [0, 2], 1, 'reference');
    const devices = new Map([
      ['host', new HostDevice('host', 'Host', caps(2 ** 30, 1), null)],
      ['g', new HostDevice('g', 'Guest', { ...caps(budget, 10), engine: 'toy' }, null)],
    ]);
    const guestLayers = (row: EngineRow): number => {
      const deal = dealRoom(devices, null, { ...opts, engines: { ...ENGINES, toy: row } }, 'host');
      const r = deal.entries.find((e) => e.deviceId === 'g')!.range;
      return r[1] - r[0];
    };
    expect(guestLayers(toyRow)).toBe(2);
    const heavier: EngineRow = { ...toyRow, scratchBytes: (config, o) => toyRow.scratchBytes(config, o) + 2 ** 20 };
    expect(guestLayers(heavier)).toBeLessThan(2);
  });

  test('a host whose table lacks the row refuses the guest, naming its engine', async () => {
    room = await makeRoom(files);
    const guest = room.addGuest('toy222', { engine: toyRow });
    const events: GuestEvent[] = [];
    guest.on((e) => events.push(e));
    await until(() => events.some((e) => e.type === 'error'), 'refusal');
    const error = events.find((e) => e.type === 'error') as Extract<GuestEvent, { type: 'error' }>;
    expect(error.error.message).toMatch(/engine "toy" is none this room runs \(webgpu, wasm, reference\)/);
    expect(room.host.deviceList().map((d) => d.id)).toEqual(['host']);
  });
});
