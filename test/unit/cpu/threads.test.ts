// Issue 29 acceptance 1, threads: the linear kernel split over a worker pool on one shared memory gives
// bit-identical results to one thread, for every weight format, on odd row counts; and a whole model on
// 2 and 3 threads gives the same hidden states (bit for bit) and the golden tokens. Each on both SIMD
// paths (plain SIMD128, relaxed SIMD): within a path the thread count never changes a bit.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { loadKernelBinary } from '../../../src/cpu/kernel-binary.ts';
import type { SimdPath } from '../../../src/cpu/simd-path.ts';
import { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { quantizeGgml } from '../../../src/model/formats/gguf/ggml-quantize.ts';
import { GGML_TYPES } from '../../../src/model/formats/gguf/ggml-types.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { quantizeQ4f16 } from '../../../src/model/tensor-utils.ts';
import type { GgmlType, Linear } from '../../../src/model/types.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../../helpers/tiny-model.ts';
import { randomF32, testKernels } from './helpers.ts';

const TYPES: GgmlType[] = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q4_K', 'Q5_K', 'Q6_K'];
const SLOW = 240_000;   // the threads build compiles on first use; workers start

const PATHS: SimdPath[] = ['plain', 'relaxed'];

describe.each(PATHS)('the linear kernel on 1 and 3 threads, %s SIMD', (simd) => {
  let one: WasmKernels, three: WasmKernels;
  beforeAll(async () => {
    one = await testKernels(simd);
    three = await WasmKernels.create(await loadKernelBinary(true, simd), { threads: 3 });
    expect([one.simd, three.simd, three.threads]).toEqual([simd, simd, 3]);
    expect(three.memory.buffer).toBeInstanceOf(SharedArrayBuffer);
  }, SLOW);
  afterAll(() => three?.close());

  const cases: [string, Linear][] = [
    ...TYPES.map((t): [string, Linear] => {
      const K = GGML_TYPES[t].blockSize === 1 ? 67 : 2 * GGML_TYPES[t].blockSize;
      return [`${t} 101×${K}`, { kind: 'ggml', rows: 101, cols: K, segments: [{ name: t, type: t, rows: 101, bytes: quantizeGgml(t, randomF32(101 * K, 3, 0.5), 101, K) }] }];
    }),
    ['MLC q4f16_1 77×64', quantizeQ4f16('w', randomF32(77 * 64, 4, 0.5), 77, 64)],
  ];
  it.each(cases)('%s: n = 1 and n = 7 tokens, bit for bit', (_label, w) => {
    const a = one.placeLinear(w), b = three.placeLinear(w);
    const jobs = three.poolJobs;
    for (const n of [1, 7]) {
      const x = randomF32(n * w.cols, 10 + n);
      const single = one.linear(a, x, n);
      expect(three.linear(b, x, n)).toEqual(single);
      expect(three.linear(b, x, n, 13, 90)).toEqual(one.linear(a, x, n, 13, 90));
    }
    expect(three.poolJobs - jobs).toBe(4);   // every call above was split across the workers
  });

  const INT_TYPES: GgmlType[] = ['Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];
  it.each(INT_TYPES)('activations q8, %s 101 rows: n = 1 and n = 9 tokens, whole and a row range, bit for bit', (t) => {
    const K = 3 * GGML_TYPES[t].blockSize;
    const w: Linear = { kind: 'ggml', rows: 101, cols: K, segments: [{ name: t, type: t, rows: 101, bytes: quantizeGgml(t, randomF32(101 * K, 5, 0.5), 101, K) }] };
    one.activations = three.activations = 'q8';
    try {
      const a = one.placeLinear(w), b = three.placeLinear(w), jobs = three.poolJobs;
      for (const n of [1, 9]) {
        const x = randomF32(n * K, 20 + n);
        expect(three.linear(b, x, n)).toEqual(one.linear(a, x, n));
        expect(three.linear(b, x, n, 13, 90)).toEqual(one.linear(a, x, n, 13, 90));
      }
      expect(three.poolJobs - jobs).toBe(4);
    } finally {
      one.activations = three.activations = 'f32';
    }
  });

  // attention splits by KV heads (here 4 over 3 threads: 1, 1, 2), each head computed as on one thread
  it.each(['f16', 'q8_0'] as const)('attention over an %s cache, 8 query heads over 4 KV heads: 1 and 5 tokens, bit for bit', (cache) => {
    const Hq = 8, Hkv = 4, D = 48, before = 9;
    const split = three.splitJobs;
    for (const n of [1, 5]) {
      const total = before + n, kv = total * Hkv * D;
      const keys = randomF32(kv, 31 + n, 2), values = randomF32(kv, 41 + n, 2), q = randomF32(n * Hq * D, 51 + n, 2);
      const run = (k: WasmKernels): Float32Array => k.frame(() => {
        const qp = k.input(q), op = k.alloc(q.length * 4);
        if (cache === 'f16') {
          const half = (v: Float32Array): number => { const dst = k.alloc(v.length * 2); k.toHalfAt(k.input(v), dst, v.length); return dst; };
          k.attentionAt(qp, half(keys), half(values), op, n, before, Hq, Hkv, D);
        } else {
          const nb = Math.ceil(D / 32);
          const place = (v: Float32Array) => {
            const blocks = { quants: k.alloc(total * Hkv * nb * 32), scales: k.alloc(total * Hkv * nb * 2) };
            k.quantizeQ8At(k.input(v), blocks, total * Hkv, D);
            return blocks;
          };
          k.attentionQ8At(qp, place(keys), place(values), op, n, before, Hq, Hkv, D);
        }
        return k.f32(op, q.length).slice();
      });
      expect(run(three)).toEqual(run(one));
    }
    expect(three.splitJobs - split).toBe(2);
  });

  // the gated delta rule splits by value heads (6 over 3 threads), each head's state and output its own
  it.each([false, true])('the gated delta rule, 6 value heads over 2 key heads (tiled %s): 1 and 5 tokens, output and state bit for bit', (tiled) => {
    const nk = 2, nv = 6, dk = 16, dv = 13, C = 2 * nk * dk + nv * dv, split = three.splitJobs;
    const run = (k: WasmKernels, n: number, S0: Float32Array): [Float32Array, Float32Array] => k.frame(() => {
      const conv = k.input(randomF32(n * C, 61 + n, 1)), g = k.input(randomF32(n * nv, 62 + n, 1).map((v) => -Math.abs(v))), beta = k.input(randomF32(n * nv, 63 + n, 1).map((v) => Math.abs(v)));
      const S = k.input(S0), o = k.alloc(n * nv * dv * 4);
      k.gatedDeltaRuleAt(conv, g, beta, S, o, n, { numKeyHeads: nk, numValueHeads: nv, keyDim: dk, valueDim: dv, convKernel: 4, tiled });
      return [k.f32(o, n * nv * dv).slice(), k.f32(S, nv * dk * dv).slice()];
    });
    for (const n of [1, 5]) {
      const S0 = randomF32(nv * dk * dv, 60 + n, 0.5);
      const [o1, s1] = run(one, n, S0), [o3, s3] = run(three, n, S0);
      expect(o3).toEqual(o1);
      expect(s3).toEqual(s1);
      expect(s1).not.toEqual(S0);   // the state really moved
    }
    expect(three.splitJobs - split).toBe(2);
  });
});

it.each(PATHS)('a whole model (tiny GGUF dense-Q4_K_M) on 1, 2 and 3 threads, %s SIMD: the same hidden states bit for bit, the golden tokens', async (simd) => {
  const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q4_K_M']);
  const weights = await loadWeights(await resolveModelSource(m.path), { layers: [0, 4], embedding: true, head: true });
  const hidden: Float32Array[] = [];
  for (const threads of [1, 2, 3]) {
    const engine = await createCpuEngine(weights, { ctx: 64, threads, simd });
    expect(engine.stats()).toMatchObject({ threads, simd });
    hidden.push(await engine.runLayers([0, 4], 0, await engine.embed(golden.promptIds)));
    await engine.truncate(0);
    const r = await new Generator(engine, { ctx: 64 }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
    expect(r.ids).toEqual(golden.models['dense-Q4_K_M'].ids);
    await engine.dispose();
  }
  expect(hidden[1]).toEqual(hidden[0]);
  expect(hidden[2]).toEqual(hidden[0]);
}, SLOW);
