// `npm run plan` end to end, spawned as a user runs it: the deal for devices offering so many GiB, from a
// model's header alone (a sparse full-size Qwen3-30B-A3B Q4_K_M GGUF, as a file and by URL from a
// 127.0.0.1 Range server that counts what it sends), the same deal the room makes (planRoom in this
// process), and its refusals.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { dealModelOf, planRoom } from '../../../src/room/plan.ts';
import { writeFullSizeGguf } from '../../helpers/full-size-models.ts';
import { startRangeServer, type RangeServer } from '../../helpers/range-server.ts';

const root = resolve(import.meta.dirname, '../../..');
const GiB = 2 ** 30;
// One run parses the header's 151,936-token vocabulary (≈3 s alone) after tsx starts: 90 s leaves room
// for a busy 2-core box; the file is written once (≈15 s).
const RUN_MS = 90_000;

interface Run { code: number; stdout: string; stderr: string }
function plan(...args: string[]): Promise<Run> {
  return new Promise((ok) => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/plan.ts', ...args], { cwd: root, timeout: RUN_MS },
      (err, stdout, stderr) => ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

describe('npm run plan', () => {
  let dir: string;
  let file: string;
  let server: RangeServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pooled-plan-'));
    file = (await writeFullSizeGguf(dir, '30b-a3b')).path;
    server = await startRangeServer(dirname(file));
  }, 120_000);
  afterAll(async () => { await server?.close(); if (dir) await rm(dir, { recursive: true, force: true }); });

  it('--json prints one object: fits, the context the room holds, the KV type and each device\'s layers, bytes and offer, as the room deals it', async () => {
    const r = await plan('--model', file, '--devices', '8,4,4,4', '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!) as { fits: boolean; ctx: number; kv: string; devices: { layers: [number, number]; bytes: number; budgetBytes: number }[] };
    expect(Object.keys(out)).toEqual(['fits', 'ctx', 'want', 'kv', 'note', 'devices']);
    const model = await dealModelOf(await resolveModelSource(file));
    const room = planRoom(model, [8, 4, 4, 4].map((g) => g * GiB), { want: 32_768 });
    expect(out).toMatchObject({ fits: true, ctx: room.ctx, kv: 'f16' });
    expect(out.ctx).toBeGreaterThanOrEqual(16_384);
    expect(out.devices).toEqual(room.devices.map((d) => ({ layers: [d.range[0], d.range[1] - 1], bytes: d.bytes, budgetBytes: d.budgetBytes })));
    expect(out.devices[0]!.layers[0]).toBe(0);
    expect(out.devices.at(-1)!.layers[1]).toBe(47);
  }, RUN_MS);

  it('by URL it reads the header only; --kv q8_0 holds 32,768; the table names each device', async () => {
    server.reset();
    const r = await plan('--model', `${server.url}/${basename(file)}`, '--devices', '8,4,4,4', '--kv', 'q8_0');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fits: context 32,768 \(KV q8_0\)\n/);
    expect(r.stdout).toMatch(/\nguest 3 +\d+–47 \(\d+\)/);
    expect(server.totalBytesSent()).toBeLessThan(16 * 2 ** 20);   // the ≈8 MB header, not 18.56 GB
  }, RUN_MS);

  it('a --ctx the room cannot hold is refused naming the context it can (exit 1); bad usage exits 2', async () => {
    const r = await plan('--model', file, '--devices', '8,4,4,4', '--ctx', '32768', '--json');
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { fits: boolean; note: string };
    expect(out.fits).toBe(false);
    expect(out.note).toMatch(/holds a context of [\d,]+ tokens, not the 32,768 asked for/);
    const bad = await plan('--model', file, '--devices', '8,four');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--devices: "four" is not a number of GiB');
    const kv = await plan('--model', file, '--devices', '8', '--kv', 'q4');
    expect([kv.code, kv.stderr.split('\n')[0]]).toEqual([2, '--kv must be f16 or q8_0, got "q4"']);
  }, 2 * RUN_MS);
});
