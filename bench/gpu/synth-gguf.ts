// A synthetic full-size GGUF for the GPU bench: the header sparse-gguf.ts makes for a model's real
// dimensions (every tensor's name, shape and Q4_K_M type, the Qwen3 vocabulary), then every tensor's
// bytes: random quantized blocks whose scales are set so weights come out about ±0.02 (as trained
// ones), norms of 1, other F32 tensors small. Random bytes come from one pool, laid out in the type's
// blocks with the scales patched once, and written in slices from varying offsets: an 18 GB file is
// written at disk speed. Files are kept in `dir` and reused while their size matches.
import { randomFillSync } from 'node:crypto';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { ggufTensorBytes } from '../../src/model/formats/gguf/gguf-write.ts';
import { GGML_TYPES } from '../../src/model/formats/gguf/ggml-types.ts';
import { f32ToF16Bits } from '../../src/model/tensor-utils.ts';
import { sparseGguf } from '../../src/model/tiny/sparse-gguf.ts';
import { qwen3GgufVocab } from '../../src/model/tiny/write-node.ts';
import type { GgmlType } from '../../src/model/types.ts';
import type { BenchShape } from './shapes.ts';

const POOL_BLOCKS = 1 << 16;
const ALIGNMENT = 32;

/** Where each block type keeps its f16 scales (byte offsets in a block) and the value that gives weights near ±0.02. */
const SCALES: Partial<Record<GgmlType, { at: number; value: number }[]>> = {
  Q4_K: [{ at: 0, value: 1e-4 }, { at: 2, value: 1e-4 }],      // d, dmin; 6-bit sub-scales and nibbles random
  Q5_K: [{ at: 0, value: 5e-5 }, { at: 2, value: 5e-5 }],
  Q6_K: [{ at: 208, value: 2e-5 }],                            // d after ql, qh and the i8 sub-scales
  Q8_0: [{ at: 0, value: 3e-4 }],
  Q4_0: [{ at: 0, value: 3e-3 }],
  Q5_0: [{ at: 0, value: 1.5e-3 }],
};

/** A pool of random blocks of `type` with sane scales. */
function blockPool(type: GgmlType): Uint8Array {
  const { blockBytes } = GGML_TYPES[type];
  const pool = new Uint8Array(POOL_BLOCKS * blockBytes);
  randomFillSync(pool);
  if (type === 'F32') {
    const f = new Float32Array(pool.buffer);
    for (let i = 0; i < f.length; i++) f[i] = ((i * 2654435761) >>> 0) / 2 ** 32 * 0.04 - 0.02;
    return pool;
  }
  const scales = SCALES[type];
  if (!scales) throw new Error(`synth-gguf: no random blocks for ${type} (add its scale offsets)`);
  const view = new DataView(pool.buffer);
  for (let b = 0; b < POOL_BLOCKS; b++) for (const s of scales) view.setUint16(b * blockBytes + s.at, f32ToF16Bits(s.value), true);
  return pool;
}

/** Write (or reuse) `shape`'s Q4_K_M GGUF in `dir`; its path, size and the tensor types it holds. */
export async function synthGguf(dir: string, shape: BenchShape): Promise<{ path: string; size: number; written: boolean; types: Record<string, number> }> {
  const g = sparseGguf(shape.model, 'Q4_K_M', await qwen3GgufVocab(), `bench-${shape.name}-Q4_K_M`);
  const file = path.join(dir, `bench-${shape.name}-Q4_K_M.gguf`);
  const types: Record<string, number> = {};
  for (const t of g.tensors) types[t.type] = (types[t.type] ?? 0) + 1;
  try {
    if (statSync(file).size === g.size) return { path: file, size: g.size, written: false, types };
  } catch { /* not there yet */ }
  mkdirSync(dir, { recursive: true });
  const pools = new Map<GgmlType, Uint8Array>();
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, g.header);
    let at = g.header.byteLength, turn = 0;
    for (const t of g.tensors) {
      const bytes = ggufTensorBytes(t.type, t.ne);
      if (t.type === 'F32' && /norm/.test(t.name)) {
        writeSync(fd, new Uint8Array(new Float32Array(bytes / 4).fill(1).buffer), 0, bytes, at);
      } else {
        let pool = pools.get(t.type);
        if (!pool) pools.set(t.type, pool = blockPool(t.type));
        const blockBytes = GGML_TYPES[t.type].blockBytes;
        for (let done = 0; done < bytes;) {
          // start each slice at another block of the pool, so neighbouring rows differ
          const from = ((turn++ * 7919) % POOL_BLOCKS) * blockBytes;
          const n = Math.min(bytes - done, pool.byteLength - from);
          writeSync(fd, pool, from, n, at + done);
          done += n;
        }
      }
      at += bytes + ((ALIGNMENT - (bytes % ALIGNMENT)) % ALIGNMENT);
    }
    if (at !== g.size) throw new Error(`synth-gguf: wrote ${at} bytes, the header says ${g.size}`);
  } finally {
    closeSync(fd);
  }
  return { path: file, size: g.size, written: true, types };
}
