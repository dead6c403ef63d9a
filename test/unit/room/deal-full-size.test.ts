// The rooms the product promises, dealt at full size from sparse GGUFs (the real header, the real tensor
// list with each tensor in the type llama-quantize's Q4_K_M mix gives it, a hole for the weights):
// Qwen3-30B-A3B onto a host of 8 GiB + three guests of 4 GiB, Qwen3.6-35B-A3B onto 8 GiB + four of 4 GiB.
// The deal counts weights (exact, from the plan), KV at the context it picks, recurrent state and its
// snapshots, RoPE, activations, MoE and head scratch and the load's peak (src/room/device-bytes.ts); it
// picks the largest context the room holds, and every device's total stays within its offer.
// The q8_0 figures are the deal's byte math for that KV type (34 bytes per 32 values); that the WebGPU
// engine's q8_0 cache allocates those bytes is test/gpu/deal-bytes.test.ts's q8_0 case.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { defaultContextFor } from '../../../src/agent/budget.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import type { ModelSource } from '../../../src/model/types.ts';
import { CONTEXT_STEP } from '../../../src/room/context-choice.ts';
import { dealLayers } from '../../../src/room/deal.ts';
import { roomDealCost } from '../../../src/room/host-deal.ts';
import { dealModelOf, planRoom } from '../../../src/room/plan.ts';
import { writeFullSizeGguf } from '../../helpers/full-size-models.ts';

const GiB = 2 ** 30;
type Model = Awaited<ReturnType<typeof dealModelOf>>;

/** A source that counts the bytes read through it, and the furthest byte. */
function counting(inner: ModelSource): ModelSource & { bytes: number; furthest: number } {
  const c = Object.create(inner) as ModelSource & { bytes: number; furthest: number };
  c.bytes = 0; c.furthest = 0;
  c.readRange = async (path, start, end) => { c.bytes += end - start; c.furthest = Math.max(c.furthest, end); return inner.readRange(path, start, end); };
  c.readFile = async () => { throw new Error('a whole-file read: the plan must read headers only'); };
  return c;
}

let dir: string;
const files: Record<string, { path: string; size: number; model: Model; bytesRead: number; furthest: number }> = {};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pooled-full-size-'));
  for (const which of ['30b-a3b', '35b-a3b'] as const) {
    const f = await writeFullSizeGguf(dir, which);
    const source = counting(await resolveModelSource(f.path));
    const model = await dealModelOf(source);
    files[which] = { ...f, model, bytesRead: source.bytes, furthest: source.furthest };
  }
}, 240_000);   // two headers with 152k / 248k-token vocabularies, written and parsed: ≈30 s on a busy 2-core box
afterAll(async () => { if (dir) await rm(dir, { recursive: true, force: true }); });

/** The deal at `want` for these offers (GiB), f16 or q8_0 KV, with the checks every deal must pass. */
function dealt(model: Model, offersGiB: number[], kv: 'f16' | 'q8_0', want = defaultContextFor(model.config)) {
  const budgets = offersGiB.map((g) => g * GiB);
  const plan = planRoom(model, budgets, { want, kv });
  expect(plan.fits).toBe(true);
  const covered = plan.devices.flatMap((d) => Array.from({ length: d.range[1] - d.range[0] }, (_, i) => d.range[0] + i));
  expect(covered).toEqual(Array.from({ length: model.config.numLayers }, (_, i) => i));
  plan.devices.forEach((d) => expect(d.bytes).toBeLessThanOrEqual(d.budgetBytes));
  // The largest context: one step more does not deal.
  if (plan.ctx < want) {
    const devices = budgets.map((b, i) => ({ id: `d${i}`, name: `d${i}`, memoryBudgetBytes: b, speed: 1 }));
    expect(() => dealLayers(devices, roomDealCost({ ...model, kv }, plan.ctx + CONTEXT_STEP))).toThrowError(/does not hold/);
  }
  return plan;
}

describe('Qwen3-30B-A3B Q4_K_M on a laptop and three phones', () => {
  test('the sparse file is the real one\'s size (18.56 GB) and its plan reads the header only', () => {
    const f = files['30b-a3b']!;
    expect(Math.abs(f.size - 18.56e9)).toBeLessThan(0.005e9);
    expect(f.model.config.numLayers).toBe(48);
    expect(f.furthest).toBeLessThan(16 * 2 ** 20);              // nothing past the header's 8 MB (reads are 2 MB blocks)
    expect(f.bytesRead).toBeLessThan(16 * 2 ** 20);
    const weights = [...f.model.weightBytes!.layerBytes.values()].reduce((a, b) => a + b, 0) + f.model.weightBytes!.fixedBytes;
    expect(weights / 1e9).toBeCloseTo(18.55, 2);
  });

  test('host 8 GiB + 3 × 4 GiB: dealt at a context of at least 16,384 (f16 KV), the largest it holds', () => {
    const plan = dealt(files['30b-a3b']!.model, [8, 4, 4, 4], 'f16');
    expect(plan.want).toBe(32_768);
    expect(plan.ctx).toBeGreaterThanOrEqual(16_384);
    expect(plan.note).toMatch(/^context [\d,]+ — what this room holds; add a device for 32,768$/);
    console.log(`30B-A3B f16: ${plan.note}; ${plan.devices.map((d) => `${d.name} ${d.range[1] - d.range[0]} layers ${(d.bytes / GiB).toFixed(2)}/${d.budgetBytes / GiB} GiB`).join(', ')}`);
  });

  test('with the q8_0 KV cache the same room holds the default 32,768', () => {
    const plan = dealt(files['30b-a3b']!.model, [8, 4, 4, 4], 'q8_0');
    expect(plan.ctx).toBe(32_768);
    console.log(`30B-A3B q8_0: ${plan.note}; ${plan.devices.map((d) => `${(d.bytes / GiB).toFixed(2)}`).join(', ')} GiB`);
  });

  test('?ctx=32768 with f16 KV is refused, naming the context the room holds', () => {
    const m = files['30b-a3b']!.model;
    const holds = planRoom(m, [8, 4, 4, 4].map((g) => g * GiB), { want: 32_768 }).ctx;
    const exact = planRoom(m, [8, 4, 4, 4].map((g) => g * GiB), { want: 32_768, exact: true });
    expect(exact.fits).toBe(false);
    expect(exact.note).toContain(`holds a context of ${holds.toLocaleString('en-US')} tokens, not the 32,768 asked for`);
  });
});

describe('Qwen3.6-35B-A3B Q4_K_M on a laptop and four phones', () => {
  test('the sparse file: 40 layers (30 Gated DeltaNet, 10 attention), ≈21.2 GB, header only read', () => {
    const f = files['35b-a3b']!;
    expect(f.model.config.numLayers).toBe(40);
    expect(f.model.config.hybrid!.layerTypes.filter((t) => t === 'full_attention')).toHaveLength(10);
    expect(Math.abs(f.size / 1e9 - 21.2)).toBeLessThan(0.1);
    expect(f.furthest).toBeLessThan(16 * 2 ** 20);
  });

  test('host 8 GiB + 4 × 4 GiB: dealt at the default 32,768 (f16 and q8_0), recurrent state and its snapshots counted', () => {
    const m = files['35b-a3b']!.model;
    for (const kv of ['f16', 'q8_0'] as const) {
      const plan = dealt(m, [8, 4, 4, 4, 4], kv);
      expect(plan.ctx).toBeGreaterThanOrEqual(16_384);
      expect(plan.ctx).toBe(32_768);
      console.log(`35B-A3B ${kv}: ${plan.note}; ${plan.devices.map((d) => `${(d.bytes / GiB).toFixed(2)}`).join(', ')} GiB`);
    }
    // The snapshots are in the deal: with no checkpoints the same devices hold less.
    const none = planRoom(m, [8, 4, 4, 4, 4].map((g) => g * GiB), { want: 32_768, ckpt: 0 });
    const four = planRoom(m, [8, 4, 4, 4, 4].map((g) => g * GiB), { want: 32_768 });
    const total = (p: typeof four) => p.devices.reduce((a, d) => a + d.bytes, 0);
    expect(total(four) - total(none)).toBe(30 * 5 * ((3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 4));   // 30 linear layers × 5 snapshots × state
  });
});
