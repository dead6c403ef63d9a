// MoE experts on the device. A sparse layer's experts are stacked along rows in every format (expert e
// of gate/up is rows [e·I_e, (e+1)·I_e), of down rows [e·H, (e+1)·H)), so a kernel finds an expert by its
// id alone. Here the parts a kernel runs together are laid out expert by expert — for gate|up, expert
// e's gate rows then its up rows, the layout of a dense layer's fused gate|up, so the silu epilogue
// applies within each expert — and cut into chunks of whole experts within the binding limit. Rows are
// copied as stored (dense rows padded to 16 bytes as for any dense weight; ggml blocks untouched): laid out
// in JS for held weights; for a streamed load the chunk is made empty and each expert's rows are placed
// straight from the pieces (weight-writer.ts), so no chunk is ever built in JS.
import { ggmlRowBytes } from '../model/formats/gguf/ggml-types.ts';
import { linearName } from '../model/tensor-utils.ts';
import type { Linear } from '../model/types.ts';
import { GpuResourceError, UnsupportedWeightError } from './errors.ts';
import { createBufferFrom, type ChunkFormat, type GpuLinear, type GpuLinearChunk, type HeldBytes } from './gpu-weights.ts';
import { writerOf } from './weight-writer.ts';

export interface GpuExpertChunk extends GpuLinearChunk {
  experts: [number, number];   // [e0, e1)
}

export interface GpuExperts extends GpuLinear {
  experts: number;             // E
  rowsPerExpert: number;       // rows of one expert across the parts (gate|up: 2·I_e)
  rowBytes: number;            // bytes of one stored row (for the bytes-read accounting)
  chunks: GpuExpertChunk[];
}

interface Stored { format: ChunkFormat; src: HeldBytes; rowBytes: number; rowStride: number; key: string }

/** A part as stored: its format and bytes (one ggml type, or one dense dtype). */
function stored(l: Linear): Stored {
  if (l.kind === 'dense') {
    const { dtype } = l.weight;
    if (!(dtype === 'F32' || dtype === 'F16' || dtype === 'BF16')) throw new UnsupportedWeightError(`tensor "${l.weight.name}": dense experts must be F32, F16 or BF16, got ${dtype}`);
    const rowBytes = l.cols * (dtype === 'F32' ? 4 : 2);
    return { format: { kind: 'dense', wdtype: dtype === 'F32' ? 0 : dtype === 'F16' ? 1 : 2 }, src: l.weight, rowBytes, rowStride: Math.ceil(rowBytes / 16) * 16, key: dtype };
  }
  if (l.kind === 'ggml' && l.segments.length === 1) {
    const s = l.segments[0]!;
    if (s.type === 'F32' || s.type === 'F16' || s.type === 'BF16') {
      return stored({ kind: 'dense', rows: l.rows, cols: l.cols, weight: { name: s.name, dtype: s.type, shape: [l.rows, l.cols], bytes: s.bytes, ...(s.stream ? { stream: s.stream } : {}) } });
    }
    const rowBytes = ggmlRowBytes(s.type, l.cols);
    return { format: { kind: 'ggml', type: s.type }, src: s, rowBytes, rowStride: rowBytes, key: s.type };
  }
  throw new UnsupportedWeightError(`tensor "${linearName(l)}": MoE experts on the GPU must be one dense or ggml type (got ${l.kind}${l.kind === 'ggml' ? ` with ${l.segments.length} segments` : ''})`);
}

/** A zero-filled weight buffer of `bytes` (padded to 4), for a streamed load to write into. */
function emptyBuffer(device: GPUDevice, bytes: number, label: string): GPUBuffer {
  const size = Math.max(4, Math.ceil(bytes / 4) * 4);
  try {
    return device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  } catch (e) {
    throw new GpuResourceError(`${label}: cannot allocate ${size} bytes on the GPU (${(e as Error).message})`, { cause: e });
  }
}

/** True when the parts can share one expert layout (the same stored format): gate and up fused. */
export function sameExpertFormat(parts: readonly Linear[]): boolean {
  return new Set(parts.map((p) => stored(p).key)).size === 1;
}

/** Parts [E·r_i, K] (same K and format) laid out expert by expert, chunked by whole experts. */
export function uploadExperts(device: GPUDevice, parts: readonly Linear[], E: number, maxBindingBytes: number): GpuExperts {
  const name = parts.map(linearName).join('|');
  const cols = parts[0]!.cols;
  const ps = parts.map(stored);
  if (!sameExpertFormat(parts) || parts.some((p) => p.cols !== cols || p.rows % E !== 0)) {
    throw new UnsupportedWeightError(`experts "${name}": parts must share K, format and a whole number of rows per expert`);
  }
  const rowsOf = parts.map((p) => p.rows / E);
  const rowsPerExpert = rowsOf.reduce((a, b) => a + b, 0);
  const { format, rowStride, rowBytes } = ps[0]!;
  const expertBytes = rowsPerExpert * rowStride;
  const per = Math.min(E, Math.floor((maxBindingBytes - 32) / expertBytes));
  if (per < 1) throw new GpuResourceError(`experts "${name}": one expert (${expertBytes} bytes) exceeds the binding limit of ${maxBindingBytes} bytes`);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const chunks: GpuExpertChunk[] = [];
  for (let e0 = 0; e0 < E; e0 += per) {
    const e1 = Math.min(E, e0 + per);
    const label = `${name} experts [${e0}, ${e1})`;
    const tail = format.kind === 'ggml' ? 16 : 0;
    const streamed = ps.some((p) => p.src.stream);
    // In JS: the chunk laid out here, then uploaded. Streamed: the buffer made empty and each expert's
    // rows of each part placed where this layout puts them (no copy in JS).
    const data = streamed ? undefined : new Uint8Array((e1 - e0) * expertBytes);
    const buffer = data ? undefined : emptyBuffer(device, (e1 - e0) * expertBytes + tail, label);
    let at = 0;
    for (let e = e0; e < e1; e++) {
      ps.forEach((p, i) => {
        const r0 = e * rowsOf[i]!, r1 = (e + 1) * rowsOf[i]!;
        if (!data) {
          if (!p.src.stream) throw new UnsupportedWeightError(`experts "${name}": parts must all be streamed or all be held`);
          writerOf(device, label).place(p.src.stream, r0 * p.rowBytes, r1 * p.rowBytes, buffer!, at, p.rowBytes, rowStride);
          at += (r1 - r0) * rowStride;
          return;
        }
        for (let r = r0; r < r1; r++) {
          data.set(p.src.bytes.subarray(r * p.rowBytes, (r + 1) * p.rowBytes), at);
          at += rowStride;
        }
      });
    }
    const made = data ? createBufferFrom(device, data, usage, label, tail) : buffer!;
    chunks.push({ rowStart: e0 * rowsPerExpert, rows: (e1 - e0) * rowsPerExpert, format, buffers: [made], experts: [e0, e1] });
  }
  const bytes = chunks.reduce((a, c) => a + c.buffers[0]!.size, 0);
  return { name, rows: E * rowsPerExpert, cols, chunks, bytes, experts: E, rowsPerExpert, rowBytes };
}
