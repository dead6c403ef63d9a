// Shared by the GPU tests: one Dawn device per test file (npm `webgpu` on Mesa lavapipe), seeded data,
// and tiny checkpoints on disk loaded through the real readers.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requestEngineDevice } from '../../src/gpu/device.ts';
import { nodeAdapter } from '../../src/gpu/node-gpu.ts';
import { loadWeights } from '../../src/model/load-weights.ts';
import { NodeFolderSource } from '../../src/model/sources/node-folder.ts';
import { writeTinyModel } from '../../src/model/tiny/write-node.ts';
import type { TinyModelOptions } from '../../src/model/tiny/tiny-model.ts';
import type { ModelWeights, WeightRequest } from '../../src/model/types.ts';

process.env.XDG_RUNTIME_DIR ??= mkdtempSync(path.join(tmpdir(), 'xdg-'));

/** A device from lavapipe; useF16 false asks for no shader-f16 (the SwiftShader / phone path). */
export async function testDevice(useF16: boolean): Promise<GPUDevice> {
  const adapter = await nodeAdapter();
  return requestEngineDevice({ adapter, useF16 });
}

/** Deterministic uniform [−1, 1) samples. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return (((z ^ (z >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

export function randomF32(n: number, seed: number, scale = 1): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => r() * scale);
}

/** max |a − b| / max(1, max |b|). */
export function relErr(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`lengths ${a.length} vs ${b.length}`);
  let maxDiff = 0;
  let maxRef = 1;
  for (let i = 0; i < a.length; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(a[i]! - b[i]!));
    if (Number.isNaN(a[i]!)) return Infinity;
    maxRef = Math.max(maxRef, Math.abs(b[i]!));
  }
  return maxDiff / maxRef;
}

const dirs = new Map<string, string>();

/** A tiny checkpoint written once per process: folder with safetensors/ (BF16) and mlc/ (q4f16_1). */
export async function tinyModelFolder(opts: TinyModelOptions = {}): Promise<string> {
  const key = JSON.stringify(opts);
  let dir = dirs.get(key);
  if (!dir) {
    dir = path.join(mkdtempSync(path.join(tmpdir(), 'pooled-tiny-')), 'model');
    await writeTinyModel(dir, opts, 'both');
    dirs.set(key, dir);
  }
  return dir;
}

export async function loadTiny(folder: string, request: Partial<WeightRequest> = {}): Promise<ModelWeights> {
  const source = new NodeFolderSource(folder);
  const probe = await loadWeights(source, { layers: [0, 0], embedding: false, head: false });
  const L = probe.config.numLayers;
  return loadWeights(source, { layers: [0, L], embedding: true, head: true, ...request });
}
