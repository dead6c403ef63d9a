// The engine conformance suite (test/helpers/engine-conformance.ts) for the rows of the engine table that
// run in Node: the reference and the WASM engine. The WebGPU row runs it in the gpu project
// (test/gpu/conformance.test.ts); which rows run here is asserted, so a row cannot drop out unseen.
import { expect, it } from 'vitest';
import { ENGINES } from '../../../src/engines/table.ts';
import { engineConformance } from '../../helpers/engine-conformance.ts';

const SLOW = 240_000;   // a fresh clone writes the tiny models (full Qwen3 vocabulary) and compiles the WASM kernels first
const HERE = Object.values(ENGINES).filter((r) => r.kind !== 'webgpu');

it('runs every row of the table but WebGPU (its probe finds no GPU in Node: test/gpu/conformance.test.ts runs it)', async () => {
  expect(HERE.map((r) => r.kind)).toEqual(['wasm', 'reference']);
  expect((await ENGINES.webgpu!.probe(5, {})).failed).toBeDefined();
  for (const row of HERE) expect((await row.probe(5, {})).failed).toBeUndefined();
}, SLOW);

engineConformance(HERE, ENGINES.reference!, SLOW);
