// Issue 13 acceptance 1 and 4 at the kernel level: the Qwen3 MoE sparse MLP on the device (router
// linear, moe_route, moe_group, the experts' matvec / matmul variants, moe_combine; src/gpu/ffns/moe.ts)
// against the reference's moeForward (src/model/reference/moe.ts) on odd shapes, for every expert format
// (F32, F16, BF16 and ggml block types, gate and up fused or of different types), on both paths (f32:
// no shader-f16; f16), in a subgroup + row-prefill layout and a workgroup-memory + tiled-prefill layout,
// experts whole or cut into chunks of a few experts. The routing kernel is checked against routeToken
// alone (ties to the lower id, norm_topk_prob both ways), and a decode step's bytes-read counter shows
// the matvecs read the chosen experts' stored bytes and no others. Qwen3.5's combine with the gated shared
// expert is checked against the hybrid reference's formula.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moeParams, moeRouteOp, routeWords, type MoeShape } from '../../src/gpu/kernels/moe/moe.ts';
import { createMoeActivations, destroyMoeActivations, uploadMoeMlp } from '../../src/gpu/ffns/moe.ts';
import type { MatmulLayout, MatvecLayout, Tuning } from '../../src/gpu/tuning.ts';
import { quantizeGgml } from '../../src/model/formats/gguf/ggml-quantize.ts';
import { moeForward, routeToken } from '../../src/model/reference/moe.ts';
import { matmul, siluMul } from '../../src/model/reference/ops.ts';
import { fromFloat32 } from '../../src/model/tensor-utils.ts';
import type { GgmlType, Linear, MoeMlpWeights } from '../../src/model/types.ts';
import { KernelHarness } from './kernel-harness.ts';
import { randomF32, relErr, testDevice } from './helpers.ts';

type Format = 'F32' | 'F16' | 'BF16' | Exclude<GgmlType, 'F32' | 'F16' | 'BF16'>;

function linearOf(format: Format, rows: number, cols: number, seed: number, scale = 0.5): Linear {
  const v = randomF32(rows * cols, seed, scale);
  const name = `w${seed}.${format}`;
  if (format === 'F32' || format === 'F16' || format === 'BF16') return { kind: 'dense', rows, cols, weight: fromFloat32(name, v, [rows, cols], format) };
  return { kind: 'ggml', rows, cols, segments: [{ name, type: format, rows, bytes: quantizeGgml(format, v, rows, cols) }] };
}

interface Case { name: string; H: number; I: number; E: number; k: number; norm: boolean; gate: Format; up: Format; down: Format }

// H and I_e multiples of 4 (of 32 / 256 for the block types); E, k and the token counts odd where they can be.
const CASES: Case[] = [
  { name: 'F32, E 7 top-3, renormalised', H: 44, I: 28, E: 7, k: 3, norm: true, gate: 'F32', up: 'F32', down: 'F32' },
  { name: 'F16, E 7 top-3, not renormalised', H: 44, I: 28, E: 7, k: 3, norm: false, gate: 'F16', up: 'F16', down: 'F16' },
  { name: 'BF16, E 5 top-1', H: 36, I: 20, E: 5, k: 1, norm: true, gate: 'BF16', up: 'BF16', down: 'BF16' },
  { name: 'Q8_0 (rows at 2 mod 4 bytes), E 6 top-2', H: 96, I: 64, E: 6, k: 2, norm: true, gate: 'Q8_0', up: 'Q8_0', down: 'Q8_0' },
  { name: 'Q5_1 gate|up, Q4_0 down, E 5 top-3', H: 64, I: 96, E: 5, k: 3, norm: true, gate: 'Q5_1', up: 'Q5_1', down: 'Q4_0' },
  { name: 'Q4_K gate|up, Q6_K down (Q4_K_M), E 5 top-2', H: 256, I: 256, E: 5, k: 2, norm: true, gate: 'Q4_K', up: 'Q4_K', down: 'Q6_K' },
  { name: 'Q4_K gate, Q5_K up (unfused: silu_mul), F16 down, E 4 top-2', H: 256, I: 256, E: 4, k: 2, norm: false, gate: 'Q4_K', up: 'Q5_K', down: 'F16' },
  { name: 'Q4_1 gate, Q5_0 up (unfused), BF16 down, E 3 top-3 (all experts)', H: 64, I: 32, E: 3, k: 3, norm: true, gate: 'Q4_1', up: 'Q5_0', down: 'BF16' },
];

function weightsOf(c: Case, seed: number): MoeMlpWeights {
  return {
    numExperts: c.E, topK: c.k, normTopkProb: c.norm, intermediate: c.I,
    router: linearOf('F32', c.E, c.H, seed, 1.5),      // spread logits: clear top-k
    gate: linearOf(c.gate, c.E * c.I, c.H, seed + 1),
    up: linearOf(c.up, c.E * c.I, c.H, seed + 2),
    down: linearOf(c.down, c.E * c.H, c.I, seed + 3),
  };
}

/** Bytes of one expert's stored rows in a stacked part. */
function expertBytes(l: Linear, E: number): number {
  const bytes = l.kind === 'dense' ? l.weight.bytes.byteLength : l.kind === 'ggml' ? l.segments[0]!.bytes.byteLength : 0;
  return bytes / E;
}

const tuning = (mv: MatvecLayout, mm: MatmulLayout): Tuning => ({
  adapterClass: 'cpu', matvec: { dense: mv, q4: mv, ggml: mv }, matmul: { dense: mm, q4: mm, ggml: mm }, attention: { splits: 1, minKeys: 64 },
});

const LAYOUTS: [string, Tuning][] = [
  ['matvec subgroupAdd 8 lanes × 6 rows; prefill rows 8 lanes × 4 rows × 5 tokens, x by subgroups',
    tuning({ WG: 8, LANES: 8, ROWS: 6, subgroups: true }, { kind: 'rows', WG: 8, R: 4, TT: 5, subgroups: true })],
  ['matvec workgroup memory 4 lanes in 16 × 2 rows; prefill tiles 16×32 of 4×2',
    tuning({ WG: 16, LANES: 4, ROWS: 2, subgroups: false }, { kind: 'tiles', BM: 16, BN: 32, TM: 4, TN: 2 })],
];

const MAX_BATCH = 19;

// Each layout on one path (the pairs cost lavapipe minutes; the paths differ in the weights' loads, the
// layouts in the kernels' structure, and every pair of the two is run by test/gpu/ggml-kernels.test.ts).
const RUNS = [[LAYOUTS[0]![0], false, LAYOUTS[0]![1]], [LAYOUTS[1]![0], true, LAYOUTS[1]![1]]] as const;

/** Case c (the i-th) on the device against moeForward: routing, output and the decode matvecs' bytes read, experts whole and chunked. */
async function checkCase(device: GPUDevice, h: KernelHarness, c: Case, i: number): Promise<void> {
  const m = weightsOf(c, 100 + 10 * i);
  const H = c.H;
  const perExpert = Math.max(2 * c.I * Math.ceil(expertBytes(m.gate, c.E) / c.I / 16) * 16, expertBytes(m.down, c.E) + 64);
  for (const maxBinding of [1 << 30, Math.floor(perExpert * 2.5) + 32]) {
    const moe = createMoeActivations(device, { numExperts: c.E, numExpertsPerTok: c.k, moeIntermediateSize: c.I, normTopkProb: c.norm, decoderSparseStep: 1, mlpOnlyLayers: [] }, H, MAX_BATCH, [{ index: 3, moe: m }]);
    const xnBuf = h.buffer(MAX_BATCH * H * 4);
    const xBuf = h.buffer(MAX_BATCH * H * 4);
    const mlp = uploadMoeMlp(device, h.cache, H, m, { step: h.step, xn: xnBuf, x: xBuf, moe, layer: 3 }, maxBinding);
    try {
      const chunks = mlp.linears.slice(1).map((l) => l.chunks.length);
      if (maxBinding < 1 << 30 && c.E > 3) expect(Math.max(...chunks), `chunks ${chunks}`).toBeGreaterThan(1);
      for (const n of [1, 5, 19]) {
        const xn = randomF32(n * H, 7 + n);
        const x0 = randomF32(n * H, 17 + n);
        device.queue.writeBuffer(xnBuf, 0, xn as Float32Array<ArrayBuffer>);
        device.queue.writeBuffer(xBuf, 0, x0 as Float32Array<ArrayBuffer>);
        device.queue.writeBuffer(moe.bytesRead, 0, new Uint32Array(c.E));
        await h.run(mlp.ops, n);
        const ref = moeForward(m, m, xn, n);
        const label = `n = ${n}, experts in ${chunks} chunks`;
        // the routing buffer: each token's k experts in ascending id, and their weights
        const route = new Uint32Array(await h.read(moe.route, 2 * moe.shape.maxPairs * 4));
        const ids = Array.from({ length: n }, (_, tok) => [...route.subarray(tok * c.k, (tok + 1) * c.k)]);
        expect(ids, label).toEqual(ref.routes.map((r) => r.experts));
        const w = new Float32Array(route.buffer, moe.shape.maxPairs * 4, n * c.k);
        // The weights come from logits that are H-term f32 dots (the reference sums in doubles): their error
        // grows with H, and the softmax carries a logit's absolute error into the weights' relative one.
        expect(relErr(w, Float32Array.from(ref.routes.flatMap((r) => r.weights))), label).toBeLessThan(1e-6 * Math.max(1, c.H / 64));
        const got = await h.readF32(xBuf, n * H);
        expect(relErr(got, x0.map((v, j) => v + ref.out[j]!)), label).toBeLessThan(2e-6);
        // bytes read by the decode matvecs: the chosen experts' gate, up and down rows as stored, nothing else
        const read = new Uint32Array(await h.read(moe.bytesRead, c.E * 4));
        const perExpertBytes = expertBytes(m.gate, c.E) + expertBytes(m.up, c.E) + expertBytes(m.down, c.E);
        const want = new Uint32Array(c.E);
        if (n === 1) for (const e of ref.routes[0]!.experts) want[e] = perExpertBytes;
        expect([...read], label).toEqual([...want]);
      }
    } finally {
      mlp.linears.forEach((l) => l.chunks.forEach((ch) => ch.buffers.forEach((b) => b.destroy())));
      destroyMoeActivations(moe);
    }
  }
}

describe.each(RUNS)('MoE sparse MLP, %s, shader-f16 %s', (_l, useF16, t) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16, t);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s: 1, 5 and 19 tokens equal moeForward; whole and chunked experts', async (_n, c, i) => {
    await checkCase(device, h, c, i);
  });
});

// The experts' decode by super-block (shaders/matvec_superblock.wgsl, a GPU candidate) on the Q4_K_M case:
// Q4_K gate|up, Q6_K down, through the expert job library (rows and bytes read per routed expert); then
// Q5_K and Q8_0 experts (Q4_0 and Q5_0 share Q8_0's structure: test/gpu/matvec-superblock.test.ts).
describe('MoE sparse MLP, super-block decode matvec (8 lanes × 2 rows in 32, subgroup shuffles), shader-f16 false', () => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(false);
    h = new KernelHarness(device, false, tuning({ WG: 32, LANES: 8, ROWS: 2, subgroups: true, superblock: true }, { kind: 'rows', WG: 8, R: 2, TT: 3, subgroups: false }));
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  const at = CASES.findIndex((c) => c.gate === 'Q4_K' && c.down === 'Q6_K');
  it(`${CASES[at]!.name}: equals moeForward, whole and chunked experts`, async () => {
    await checkCase(device, h, CASES[at]!, at);
  });

  // Q5_K's super-blocks beside Q4_K and a dense down; Q8_0 with H 96 (not whole super-blocks: it must fall
  // back to shaders/matvec.wgsl) and with H and I_e 256 (by super-block).
  const q5k = CASES.findIndex((c) => c.up === 'Q5_K');
  const q8 = CASES.findIndex((c) => c.gate === 'Q8_0');
  const more: [Case, number][] = [
    [CASES[q5k]!, q5k], [CASES[q8]!, q8],
    [{ name: 'Q8_0 by super-block, H and I_e 256, E 4 top-2', H: 256, I: 256, E: 4, k: 2, norm: true, gate: 'Q8_0', up: 'Q8_0', down: 'Q8_0' }, CASES.length],
  ];
  it.each(more.map(([c, i]) => [c.name, c, i] as const))('%s: equals moeForward, whole and chunked experts', async (_n, c, i) => {
    await checkCase(device, h, c, i);
  });
});

describe.each([false, true])('Qwen3.5 MoE: routed experts plus the gated shared expert, shader-f16 %s', (useF16) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  it.each([['BF16', 44, 28, 36], ['Q8_0', 96, 64, 32]] as const)('%s experts, H %i, I_e %i, I_s %i: 1 and 7 tokens equal the hybrid reference', async (format, H, I, Is) => {
    const c: Case = { name: format, H, I, E: 6, k: 2, norm: true, gate: format, up: format, down: format };
    const m = weightsOf(c, 300);
    const shared = { intermediate: Is, gateUp: linearOf(format, 2 * Is, H, 310), down: linearOf(format, H, Is, 311), gate: linearOf('F32', 1, H, 312, 2) };
    const moe = createMoeActivations(device, {
      numExperts: c.E, numExpertsPerTok: c.k, moeIntermediateSize: I, normTopkProb: true, decoderSparseStep: 1, mlpOnlyLayers: [], sharedExpertIntermediateSize: Is,
    }, H, MAX_BATCH, [{ index: 0, moe: m }]);
    const xnBuf = h.buffer(MAX_BATCH * H * 4);
    const xBuf = h.buffer(MAX_BATCH * H * 4);
    const mlp = uploadMoeMlp(device, h.cache, H, m, { step: h.step, xn: xnBuf, x: xBuf, moe, layer: 0, shared }, 1 << 30);
    try {
      for (const n of [1, 7]) {
        const xn = randomF32(n * H, 70 + n);
        const x0 = randomF32(n * H, 80 + n);
        device.queue.writeBuffer(xnBuf, 0, xn as Float32Array<ArrayBuffer>);
        device.queue.writeBuffer(xBuf, 0, x0 as Float32Array<ArrayBuffer>);
        await h.run(mlp.ops, n);
        // src/model/reference/ffns/moe.ts moeFfn: routed + f32(σ(gate · hn) · shared(hn)), then x +=
        const routed = moeForward(m, m, xn, n).out;
        const sh = matmul(shared.down, siluMul(matmul(shared.gateUp, xn, n), Is), n);
        const g = matmul(shared.gate, xn, n);
        for (let t = 0; t < n; t++) {
          const sg = 1 / (1 + Math.exp(-g[t]!));
          for (let j = 0; j < H; j++) routed[t * H + j] = routed[t * H + j]! + Math.fround(sg * sh[t * H + j]!);
        }
        expect(relErr(await h.readF32(xBuf, n * H), x0.map((v, j) => v + routed[j]!)), `n = ${n}`).toBeLessThan(2e-6);
      }
    } finally {
      mlp.linears.forEach((l) => l.chunks.forEach((ch) => ch.buffers.forEach((b) => b.destroy())));
      destroyMoeActivations(moe);
    }
  });
});

describe.each([false, true])('moe_route, shader-f16 %s', (useF16) => {
  let device: GPUDevice;
  let h: KernelHarness;
  beforeAll(async () => {
    device = await testDevice(useF16);
    h = new KernelHarness(device, useF16);
  });
  afterAll(() => { h?.destroy(); device?.destroy(); });

  // E past the workgroup (128) gives an invocation several experts; k = 32 is the most rounds.
  it.each([[61, 5, true], [61, 5, false], [128, 8, true], [3, 3, false], [9, 1, true], [512, 32, true], [300, 8, false], [256, 8, true]] as const)('E %i top-%i (norm %s): routeToken\'s experts and weights, ties to the lower id', async (E, k, norm) => {
    const n = 7;
    const logits = randomF32(n * E, E * 31 + k, 4);
    // ties: token 1 has all logits equal; token 2 repeats its largest logit at a lower and a higher id
    logits.fill(0.25, E, 2 * E);
    let at = 2 * E;
    for (let i = 2 * E; i < 3 * E; i++) if (logits[i]! > logits[at]!) at = i;
    logits[2 * E] = logits[at]!;
    logits[3 * E - 1] = logits[at]!;
    // token 3: five levels only, so every round picks among ties spread over the workgroup's invocations
    for (let i = 3 * E; i < 4 * E; i++) logits[i] = Math.round(logits[i]! / 2) / 2;
    // token 4: its largest logit at the last id, ties only there and at id 0
    logits[5 * E - 1] = 9; logits[4 * E] = 9;
    const shape: MoeShape = { experts: E, topK: k, normTopkProb: norm, maxPairs: n * k, hidden: 4 };
    const route = h.buffer(routeWords(shape) * 4);
    const params = moeParams(device, shape);
    try {
      const op = moeRouteOp(h.cache, { step: h.step, logits: h.buffer(logits), route, ye: route, x: route, params }, 'test');
      await h.run([op], n);
      const out = new Uint32Array(await h.read(route, 2 * n * k * 4));
      const ref = Array.from({ length: n }, (_, t) => routeToken(logits.subarray(t * E, (t + 1) * E), k, norm));
      expect(Array.from({ length: n }, (_, t) => [...out.subarray(t * k, (t + 1) * k)])).toEqual(ref.map((r) => r.experts));
      expect(relErr(new Float32Array(out.buffer, n * k * 4, n * k), Float32Array.from(ref.flatMap((r) => r.weights)))).toBeLessThan(1e-6);
    } finally {
      params.destroy();
    }
  });

  it('refuses more experts or a larger top-k than the kernels take, by name', () => {
    expect(() => moeParams(device, { experts: 513, topK: 8, normTopkProb: true, maxPairs: 8, hidden: 4 })).toThrow(/up to 512 experts/);
    expect(() => moeParams(device, { experts: 64, topK: 33, normTopkProb: true, maxPairs: 33, hidden: 4 })).toThrow(/top-32/);
  });
});
