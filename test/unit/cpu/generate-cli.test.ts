// `npm run generate -- --backend wasm` end to end, spawned as a user runs it: the tiny safetensors
// golden and the tiny Q4_K_M MoE GGUF golden on the CPU (WASM) engine; with `--kv q8_0`, the reference
// engine's tokens with a q8_0 cache (the oracle of the WebGPU engine's q8_0 test, test/gpu/kv-q8.test.ts).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { Generator } from '../../../src/model/generator.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { folderSource, GOLDEN_FILE, GOLDEN_MODEL, type GoldenFile } from '../../goldens/golden-setup.ts';
import { GGUF_GOLDEN_FILE, GGUF_GOLDEN_MODELS, type GgufGoldenFile } from '../../goldens/gguf-golden-setup.ts';
import { tinyGgufModel, tinyModelDir } from '../../helpers/tiny-model.ts';

const root = resolve(import.meta.dirname, '../../..');
// tsx start-up, a model load and (on a fresh clone) the kernels' compile, on a loaded 2-core box
const SLOW = 300_000;

function generate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, ['--import', 'tsx', '--import', './bin/wgsl-loader.mjs', 'bin/generate.ts', ...args], { cwd: root, timeout: SLOW },
      (err, stdout, stderr) => ok({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

it('--backend wasm gives the safetensors golden and the Q4_K_M MoE GGUF golden', async () => {
  const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
  const r = await generate('--model', await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' }), '--prompt-ids', golden.promptIds.join(','), '--max-new-tokens', '32', '--backend', 'wasm', '--json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as { ids: number[]; stats: Record<string, unknown> };
  expect(out.ids).toEqual(golden.formats.safetensors.ids);
  expect(out.stats).toMatchObject({ backend: 'wasm', generated: 32 });
  const g = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['moe-Q4_K_M']);
  const r2 = await generate('--model', m.path, '--prompt-ids', g.promptIds.join(','), '--max-new-tokens', '32', '--backend', 'wasm', '--json');
  expect(r2.code).toBe(0);
  expect((JSON.parse(r2.stdout) as { ids: number[] }).ids).toEqual(g.models['moe-Q4_K_M'].ids);
}, SLOW);

it('--backend wasm --kv q8_0 gives the reference engine\'s tokens with a q8_0 cache', async () => {
  const golden = JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as GoldenFile;
  const dir = await tinyModelDir({ ...GOLDEN_MODEL, format: 'safetensors' });
  const r = await generate('--model', dir, '--prompt-ids', golden.promptIds.join(','), '--max-new-tokens', '32', '--backend', 'wasm', '--kv', 'q8_0', '--json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as { ids: number[]; stats: Record<string, unknown> };
  expect(out.stats).toMatchObject({ backend: 'wasm', kv: 'q8_0', generated: 32 });
  const weights = await loadWeights(folderSource(dir), { layers: [0, GOLDEN_MODEL.layers], embedding: true, head: true });
  const ctx = out.stats.ctx as number;
  const ref = await new Generator(new ReferenceEngine(weights, { ctx, kvType: 'q8_0' }), { ctx }).generate(golden.promptIds, { maxNewTokens: 32 });
  expect(out.ids).toEqual(ref.ids);
});

it('--cpu-activations q8 runs the integer linears (32 tokens; not the golden\'s, see the README) and is refused off --backend wasm', async () => {
  const g = JSON.parse(readFileSync(GGUF_GOLDEN_FILE, 'utf8')) as GgufGoldenFile;
  const m = await tinyGgufModel(GGUF_GOLDEN_MODELS['dense-Q4_K_M']);
  const r = await generate('--model', m.path, '--prompt-ids', g.promptIds.join(','), '--max-new-tokens', '32', '--backend', 'wasm', '--cpu-activations', 'q8', '--json');
  expect(r.code).toBe(0);
  const ids = (JSON.parse(r.stdout) as { ids: number[] }).ids;
  expect(ids).toHaveLength(32);
  expect(ids).not.toEqual(g.models['dense-Q4_K_M'].ids);   // it flips at token 2 (README, "CPU activations")
  const bad = await generate('--model', m.path, '--prompt-ids', '1,2', '--cpu-activations', 'q8');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--cpu-activations applies to --backend wasm only');
}, SLOW);
