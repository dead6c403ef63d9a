// sample_pick (shaders/sample_pick.wgsl) after topk_blocks, against the reference sampler
// (src/model/sampler.ts, doubles) on seeded random logit sets × per-token seeds × (temperature, top-p,
// top-k 1 … 64), with ties, −inf / NaN and masks allowing fewer ids than k, in the GPU and the CPU
// rasterizer's top-k layouts, on both shader paths (f32 and f16). The merged top-k must equal the
// reference's candidates exactly (comparisons only) and the pick the reference's pick. They can differ
// only where f32 and doubles round a running sum to two sides of top-p or of u's target (the engine
// then redoes the token: src/gpu/candidates.ts checkDevicePick): in these cases that happens only with
// exact ties, where equal weights sum to top-p itself (32 of 40 equal candidates under top-p 0.8), and
// each such case is checked to be one; spread logits must agree exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topkBlocks, topkOp } from '../../src/gpu/kernels/sampling/topk-blocks.ts';
import { SAMPLE_PICK_OUT_WORDS, samplePickOp, samplePickWords } from '../../src/gpu/kernels/sampling/sample-pick.ts';
import { pickUniform } from '../../src/gpu/candidates.ts';
import { allowOnly, keptWeights, pickFromSorted, sampleLogits, sortedCandidates, tokenSeed } from '../../src/model/sampler.ts';
import type { SamplingOptions, TokenConstraint } from '../../src/model/engine-types.ts';
import type { TopkLayout } from '../../src/gpu/tuning.ts';
import { KernelHarness } from './kernel-harness.ts';
import { rng, testDevice } from './helpers.ts';

const NONE = 0xffffffff;

interface Case { logits: Float32Array; opts: SamplingOptions & { topK: number }; constraint?: TokenConstraint; tied?: boolean }

/** Seeded cases: spread and tied logits, −inf / NaN, masks from none to fewer ids than k. */
function cases(count: number, V: number, seed: number): Case[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(((r() + 1) / 2) * xs.length)]!;
  const out: Case[] = [];
  for (let c = 0; c < count; c++) {
    const scale = pick([1, 3, 8, 20]);
    const tied = c % 4 === 1;                                // few distinct values: many ties
    const logits = Float32Array.from({ length: V }, () => (tied ? Math.round(r() * 3) : r() * scale));
    if (c % 5 === 2) for (let i = 0; i < 40; i++) logits[Math.floor(((r() + 1) / 2) * V)] = pick([-Infinity, NaN]);
    const opts = {
      temperature: pick([0.1, 0.7, 1, 1.5]), topK: pick([1, 2, 5, 20, 20, 40, 64]), topP: pick([0.3, 0.8, 0.8, 0.95, 1]),
      seed: tokenSeed(seed + c, 17 + c),
    };
    const masked = c % 3;                                    // 0: none, 1: half the ids, 2: a few
    let constraint: TokenConstraint | undefined;
    if (masked === 1) constraint = allowOnly(Array.from({ length: V }, (_, i) => i).filter(() => r() > 0), V);
    if (masked === 2) constraint = allowOnly(Array.from({ length: 1 + Math.floor(((r() + 1) / 2) * 30) }, () => Math.floor(((r() + 1) / 2) * V)), V);
    out.push(constraint ? { logits, opts, constraint, tied } : { logits, opts, tied });
  }
  return out;
}

/**
 * Why the device's pick may differ from the reference on these candidates: a running sum (in doubles)
 * within f32 rounding (1e-5, relative) of top-p, or of u's target when the device kept `keptOnDevice`
 * candidates as the reference did. null: no boundary, a differing pick is a bug.
 */
function boundary(logits: readonly number[], opts: SamplingOptions, keptOnDevice: number): string | null {
  const TOL = 1e-5;
  const { weights, kept, total } = keptWeights(logits, logits.length, opts);
  const all = weights.reduce((a, b) => a + b, 0);
  let running = 0;
  for (let i = 0; i < weights.length; i++) {
    running += weights[i]! / all;
    if (opts.topP !== undefined && opts.topP < 1 && Math.abs(running - opts.topP) <= TOL) return `top-p: Σ p after ${i + 1} = ${running}`;
  }
  if (keptOnDevice !== kept) return null;
  const goal = pickUniform(opts) * total;
  let sum = 0;
  for (let i = 0; i < kept; i++) {
    sum += weights[i]!;
    if (Math.abs(sum - goal) <= TOL * total) return `u: Σ w after ${i + 1} = ${sum}, target ${goal}`;
  }
  return null;
}

describe.each([false, true])('sample_pick, shader-f16 path %s', (useF16) => {
  let h: KernelHarness;
  let device: GPUDevice;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  /** topk_blocks (TOPK = k) → sample_pick in one submit; the ids buffer's word 0 and the kernel's out. */
  async function runPick(layout: TopkLayout, c: Case, u = pickUniform(c.opts)): Promise<{ id: number; out: Uint32Array }> {
    const V = c.logits.length;
    const blocks = topkBlocks(V, layout);
    const mask = c.constraint?.bits ?? new Uint32Array(1);
    const params = h.uniform([c.constraint ? 1 : 0, c.constraint ? mask.length : 0, 0]);
    const best = h.buffer(blocks * c.opts.topK * 8);
    const ids = h.buffer(new Uint32Array([12345]));
    const out = h.buffer(SAMPLE_PICK_OUT_WORDS * 4);
    const pickParams = h.buffer(samplePickWords({ k: c.opts.topK, temperature: c.opts.temperature, topP: c.opts.topP ?? 1, u }), GPUBufferUsage.UNIFORM);
    await h.run([
      topkOp(h.cache, { params, logits: h.buffer(c.logits), mask: h.buffer(mask), best }, V, c.opts.topK, layout),
      samplePickOp(h.cache, { params: pickParams, best, ids, out }, blocks, layout.WG),
    ], 1);
    return { id: new Uint32Array(await h.read(ids, 4))[0]!, out: new Uint32Array(await h.read(out, SAMPLE_PICK_OUT_WORDS * 4)) };
  }

  it.each([
    ['GPU', { WG: 128, ITEMS: 8 }, 5000, 400], ['CPU rasterizer', { WG: 8, ITEMS: 64 }, 5000, 400],
    ['CPU rasterizer, 4 lanes, a Qwen vocabulary', { WG: 4, ITEMS: 64 }, 151936, 24],
  ] as const)('%s layout: the merged top-k and the pick equal the reference sampler\'s', async (_name, layout, V, count) => {
    let notArgmax = 0;
    let fewerThanK = 0;
    let redone = 0;
    for (const [i, c] of cases(count, V, V + layout.WG).entries()) {
      const label = `case ${i}: ${JSON.stringify(c.opts)}${c.constraint ? ' masked' : ''}`;
      const { id, out } = await runPick(layout, c);
      const ref = sortedCandidates(c.logits, c.opts, c.constraint);
      const top = { ids: ref.ids.slice(0, c.opts.topK), logits: ref.logits.slice(0, c.opts.topK) };
      const found = out[1]!;
      expect(found, label).toBe(top.ids.length);
      const merged = Array.from({ length: found }, (_, j) => out[5 + 2 * j]!);
      const f = new Float32Array(out.buffer);
      expect(merged, label).toEqual(top.ids);
      expect(Array.from({ length: found }, (_, j) => f[4 + 2 * j]!), label).toEqual(top.logits);
      const expected = sampleLogits(c.logits, c.opts, c.constraint);
      expect(out[0], label).toBe(id);
      if (id !== expected || out[2] !== keptWeights(top.logits, found, c.opts).kept) {
        // f32 and doubles may round to two sides of a boundary; anywhere else is a wrong pick
        expect(boundary(top.logits, c.opts, out[2]!), `${label}: GPU ${id} kept ${out[2]}, reference ${expected}`).not.toBeNull();
        expect(c.tied, `${label}: only exact ties (equal weights) land on a boundary in these cases`).toBe(true);
        redone++;
      }
      if (expected !== top.ids[0]) notArgmax++;
      if (found < c.opts.topK) fewerThanK++;
    }
    // boundary cases are rare: here only equal weights whose sum reaches top-p exactly
    expect(redone).toBeLessThanOrEqual(count / 20);
    // the cases sample for real (not only the top candidate) and include lists shorter than k
    expect(notArgmax).toBeGreaterThan(count / 6);
    expect(fewerThanK).toBeGreaterThan(0);
  });

  it('sums that are exact in f32 and doubles: the same comparisons (Σ p ≥ top-p keeps, Σ w > u · total picks)', async () => {
    // four equal logits (w = 1 each, p = 1/4) over ones whose weight is 0 both ways: every sum is exact
    const V = 300;
    const logits = new Float32Array(V).fill(-5);
    for (const id of [7, 40, 41, 299]) logits[id] = 2;
    for (const [topP, u] of [[0.5, 0.5], [0.5, 0.5 - 2 ** -24], [0.5, 0], [0.75, 11 / 16], [0.25, 0.999], [1, 0.75], [1, 0.75 - 2 ** -24]] as const) {
      const opts = { temperature: 1e-3, topK: 8, topP };
      const { id, out } = await runPick({ WG: 8, ITEMS: 64 }, { logits, opts }, u);
      const label = `top-p ${topP}, u ${u}`;
      const ref = sortedCandidates(logits, opts);
      const [ids, values] = [ref.ids.slice(0, 8), ref.logits.slice(0, 8)];
      expect(out[2], label).toBe(keptWeights(values, 8, opts).kept);
      expect(id, label).toBe(pickFromSorted(ids, values, opts, u));
    }
  });

  it('no allowed id with a finite logit: the pick is 0xffffffff (the engine reports a SamplingError)', async () => {
    const V = 700;
    const logits = new Float32Array(V).fill(1);
    logits[5] = -Infinity;
    const c: Case = { logits, opts: { temperature: 0.7, topK: 20, topP: 0.8, seed: 3 }, constraint: allowOnly([5], V) };
    const { id, out } = await runPick({ WG: 8, ITEMS: 64 }, c);
    expect([id, out[0], out[1]]).toEqual([NONE, NONE, 0]);
  });
});
