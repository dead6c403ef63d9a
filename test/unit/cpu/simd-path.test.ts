// The two SIMD paths of the WASM kernels (src/cpu/simd-path.ts, kernel-binary.ts): the probe module is
// valid exactly where relaxed SIMD is, 'auto' picks relaxed here (Node 20 with the flag kernel-binary.ts
// turns on; any later Node by default), forcing plain really loads the SIMD128-only build (its own
// relaxedSimd export says 0 and its code holds no relaxed opcode), and the relaxed build really fuses
// (its f32 dots round differently from plain's, both within the reference tolerance).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kernelCachePath } from '../../../src/cpu/build/compile-kernels.ts';
import { createCpuEngine } from '../../../src/cpu/create-engine.ts';
import { loadKernelBinary, resolveSimdPath } from '../../../src/cpu/kernel-binary.ts';
import { pickSimdPath, RELAXED_SIMD_PROBE, relaxedSimdSupported } from '../../../src/cpu/simd-path.ts';
import { WasmKernels } from '../../../src/cpu/wasm-kernels.ts';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { matmul } from '../../../src/model/reference/ops.ts';
import { resolveModelSource } from '../../../src/model/sources/resolve.ts';
import { fromFloat32 } from '../../../src/model/tensor-utils.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel } from '../../helpers/tiny-model.ts';
import { randomF32, relErr } from './helpers.ts';

const SLOW = 240_000;   // each build compiles on first use (≈15 s on 2 busy cores)

/**
 * Relaxed-SIMD instructions (opcodes 0xfd 0x100..0x113, LEB128 `fd 80..93 02`) in the module's code
 * section. A byte scan, not a decoder: an immediate could in principle spell the same three bytes, which
 * is why the plain build is also checked by its own export; the relaxed build must show some.
 */
function relaxedOpcodes(wasm: Uint8Array): number {
  let at = 8, count = 0;
  const leb = (): number => {
    let v = 0, shift = 0, b: number;
    do { b = wasm[at++]!; v |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
    return v >>> 0;
  };
  while (at < wasm.length) {
    const id = wasm[at++]!, size = leb(), end = at + size;
    if (id === 10) for (let i = at; i + 2 < end; i++) if (wasm[i] === 0xfd && wasm[i + 1]! >= 0x80 && wasm[i + 1]! <= 0x93 && wasm[i + 2] === 0x02) count++;
    at = end;
  }
  return count;
}

it('the probe module validates exactly where the relaxed build does: relaxed here, after kernel-binary.ts turned it on', async () => {
  expect(await resolveSimdPath('auto')).toBe('relaxed');
  expect(relaxedSimdSupported()).toBe(true);
  expect(WebAssembly.validate(RELAXED_SIMD_PROBE)).toBe(true);
  expect(WebAssembly.validate(await loadKernelBinary(false, 'relaxed') as Uint8Array<ArrayBuffer>)).toBe(true);
  // the same module with its relaxed_madd replaced by f32x4.add (0xfd 0xe4 0x01) leaves a v128 on the
  // stack, so it is invalid everywhere: the probe's answer comes from the opcode, not from luck
  const plainOp = RELAXED_SIMD_PROBE.slice();
  plainOp.set([0xfd, 0xe4, 0x01], RELAXED_SIMD_PROBE.length - 4);
  expect(WebAssembly.validate(plainOp)).toBe(false);
  expect(pickSimdPath('plain')).toBe('plain');
}, SLOW);

describe.each([false, true])('threads build %s', (threads) => {
  it('forcing plain loads the SIMD128-only binary: relaxedSimd() is 0 and no relaxed opcode; auto loads the relaxed one', async () => {
    const plain = await loadKernelBinary(threads, 'plain'), auto = await loadKernelBinary(threads);
    expect(relaxedOpcodes(plain)).toBe(0);
    expect(relaxedOpcodes(auto)).toBeGreaterThan(0);
    expect(plain).toEqual(new Uint8Array(readFileSync(kernelCachePath(threads ? 'threads' : 'simd'))));
    expect(auto).toEqual(new Uint8Array(readFileSync(kernelCachePath(threads ? 'threads-relaxed' : 'simd-relaxed'))));
    const k = await WasmKernels.create(plain, { threads: threads ? 2 : 1 }), r = await WasmKernels.create(auto, { threads: threads ? 2 : 1 });
    expect([k.simd, r.simd]).toEqual(['plain', 'relaxed']);
    k.close();
    r.close();
  }, SLOW);
});

it('the relaxed build fuses its f32 dots (FMA on this x64/arm64 CPU): other roundings than plain, both within 2e-6', async () => {
  const plain = await WasmKernels.create(await loadKernelBinary(false, 'plain'));
  const relaxed = await WasmKernels.create(await loadKernelBinary(false, 'relaxed'));
  const rows = 64, cols = 1000, n = 3;
  const w = { kind: 'dense' as const, rows, cols, weight: fromFloat32('w', randomF32(rows * cols, 5, 0.5), [rows, cols], 'F32') };
  const x = randomF32(n * cols, 6);
  const a = plain.linear(plain.placeLinear(w), x, n), b = relaxed.linear(relaxed.placeLinear(w), x, n);
  const ref = matmul(w, x, n);
  expect(relErr(a, ref)).toBeLessThan(2e-6);
  expect(relErr(b, ref)).toBeLessThan(2e-6);
  expect(a.filter((v, i) => v !== b[i]).length).toBeGreaterThan(rows * n / 4);   // a mul-then-add lowering would give none
}, SLOW);

it('the CPU engine with simd: plain says so, and a tiny GGUF (dense-Q8_0) gives the golden on both paths', async () => {
  const golden = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q8_0']);
  const weights = await loadWeights(await resolveModelSource(m.path), { layers: [0, 4], embedding: true, head: true });
  for (const simd of ['plain', 'relaxed'] as const) {
    const engine = await createCpuEngine(weights, { ctx: 64, simd });
    expect(engine.stats().simd).toBe(simd);
    const r = await new Generator(engine, { ctx: 64 }).generate(golden.promptIds, { maxNewTokens: golden.maxNewTokens });
    expect(r.ids).toEqual(golden.models['dense-Q8_0'].ids);
    await engine.dispose();
  }
}, SLOW);
