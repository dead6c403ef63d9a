// Issue 36 acceptance 1: `npm run bench -- --gpu` runs end to end on this machine's adapter (lavapipe) and
// writes every figure: the bench itself (bench/gpu/run.ts) on the tiny shape, ours and llama.cpp's Vulkan
// backend (node-llama-cpp, GGML_VK_VISIBLE_DEVICES=0 so it takes the software adapter), so it cannot rot.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGpuBenchArgs, runGpuBench, type GpuBenchReport } from '../../bench/gpu/run.ts';

describe('the GPU bench on the tiny shape', () => {
  // Generous: llama.cpp compiles its Vulkan pipelines on lavapipe (LLVM) for each batch size first,
  // minutes on a busy 2-core machine, and our engine loads and runs the 151,936-token head there too.
  it('writes load, prefill, decode, host time, profiles and ratios for ours and llama.cpp', { timeout: 20 * 60_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-bench-test-'));
    try {
      const out = path.join(dir, 'gpu.json');
      const opts = parseGpuBenchArgs(['--gpu', '--shapes', 'tiny', '--prompts', '16,32', '--decode', '4', '--dir', dir, '--out', out]);
      await runGpuBench(opts, () => undefined);
      const report = JSON.parse(readFileSync(out, 'utf8')) as GpuBenchReport;
      const r = report.shapes.tiny!;
      expect(r.oursError).toBeUndefined();
      expect(r.llamaError).toBeUndefined();
      const ours = r.ours!, llama = r.llama!;
      expect(r.tensorTypes).toMatchObject({ Q4_K: expect.any(Number), Q6_K: expect.any(Number), F32: expect.any(Number) });
      for (const v of [ours.loadSeconds, ours.prefill[16]!, ours.prefill[32]!, ours.decode, llama.loadSeconds, llama.prefill[16]!, llama.prefill[32]!, llama.decode]) {
        expect(v).toBeGreaterThan(0);
        expect(Number.isFinite(v)).toBe(true);
      }
      expect(ours.hostMsPerToken).toBeGreaterThanOrEqual(0);
      expect(ours.encodeMsPerToken).toBeGreaterThan(0);
      expect(ours.dispatchesPerToken).toBeGreaterThan(2 * 4);      // two layers of several dispatches, and the head
      expect(ours.profileDecode.map((p) => p.label).length).toBeGreaterThan(3);
      expect(ours.profilePrefill.every((p) => p.tokens === 32 && p.us >= 0)).toBe(true);
      expect(ours.prefillStep).toBe(64);                           // maxBatch 'auto' on a CPU rasterizer
      // the autotuner's timed candidates for the ggml formats, every one checked right here
      expect(ours.tuned.length).toBeGreaterThan(3);
      expect(ours.tuned.every((t) => /^ggml (matvec|matmul) \S+ [0-9.]+ µs$/.test(t))).toBe(true);
      expect(ours.kernels).toContain('ggml');
      expect(Object.keys(r.ratios!).sort()).toEqual(['decode', 'prefill 16', 'prefill 32']);
      expect(r.ratios!.decode).toBeCloseTo(ours.decode / llama.decode, 9);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
