// Weights on the device. A Linear [N, K] becomes row chunks, each within maxBindingBytes, so a tensor
// larger than the binding limit (a 151k-row embedding) is split transparently; kernels run per chunk.
// Each chunk has one format, so a GGUF matrix whose row segments mix types (Q4_K q|k rows, Q6_K v rows)
// is chunks of different formats:
//   dense: one u32 buffer [rows, rowWords]: F32 one value a word, F16/BF16 two, each row padded with zeros
//          to a whole 16 bytes so kernels read it in vec4<u32> blocks
//   q4f16_1: qweight u32 [rows, K/8] and scales (f16 pairs) [rows, K/32], sliced by the same rows
//   ggml: the segment's rows exactly as stored in the GGUF (blocks back to back, no padding between rows,
//         so blocks may start at any even byte), plus 16 zero bytes at the end so a kernel's vec4 reads
//         of the last block stay inside the buffer
import { toFloat32 } from '../model/tensor-utils.ts';
import { GGML_TYPES, ggmlRowBytes } from '../model/formats/gguf/ggml-types.ts';
import type { GgmlType, Linear, StoredDType, StreamRef, TensorData } from '../model/types.ts';
import { GpuResourceError, UnsupportedWeightError } from './errors.ts';
import { writerOf } from './weight-writer.ts';

/** The ggml block types with WGSL kernels (shaders/lib/ggml/<type>.wgsl); float types run as dense. */
export type GgmlBlockType = Exclude<GgmlType, 'F32' | 'F16' | 'BF16'>;

export const GGML_BLOCK_TYPES: readonly GgmlBlockType[] = ['Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q4_K', 'Q5_K', 'Q6_K'];

/** How a chunk's rows are stored, which picks its kernels (src/gpu/kernels/linear/linear.ts). */
export type ChunkFormat =
  | { kind: 'dense'; wdtype: 0 | 1 | 2 }       // F32, F16, BF16
  | { kind: 'q4' }                             // MLC q4f16_1
  | { kind: 'ggml'; type: GgmlBlockType };

export interface GpuLinearChunk {
  rowStart: number;
  rows: number;
  format: ChunkFormat;
  buffers: GPUBuffer[];        // dense: [weight]; q4: [qweight, scales]; ggml: [weight]
}

export interface GpuLinear {
  name: string;
  rows: number;
  cols: number;
  chunks: GpuLinearChunk[];
  bytes: number;
}

const WDTYPE = { F32: 0, F16: 1, BF16: 2 } as const;

/** Bytes a plain upload of `data` takes, padded to 4. */
function padded(n: number): number {
  return Math.ceil(n / 4) * 4;
}

export function createBufferFrom(device: GPUDevice, data: Uint8Array, usage: number, label: string, tailBytes = 0): GPUBuffer {
  const size = Math.max(4, padded(data.byteLength + tailBytes));
  let buffer: GPUBuffer;
  try {
    buffer = device.createBuffer({ label, size, usage, mappedAtCreation: true });
  } catch (e) {
    throw new GpuResourceError(`${label}: cannot allocate ${size} bytes on the GPU (${(e as Error).message})`, { cause: e });
  }
  new Uint8Array(buffer.getMappedRange()).set(data);
  buffer.unmap();
  return buffer;
}

/** Bytes held in JS, or streamed (the tensor's `stream`: its bytes arrive later, see weight-writer.ts). */
export interface HeldBytes { bytes: Uint8Array; stream?: StreamRef }

/**
 * A weight buffer holding bytes [m0, m1) of `src` (whole rows of rowBytes, each placed every rowStride),
 * plus tailBytes of zeros: filled now from JS, or created empty and placed for the streamed load.
 */
export function weightBuffer(device: GPUDevice, src: HeldBytes, m0: number, m1: number, rowBytes: number, rowStride: number, label: string, tailBytes = 0): GPUBuffer {
  if (!src.stream) {
    const r0 = m0 / rowBytes, r1 = m1 / rowBytes;
    return createBufferFrom(device, rowsWithStride(src.bytes, r0, r1, rowBytes, rowStride), USAGE(), label, tailBytes);
  }
  const writer = writerOf(device, label);
  const size = Math.max(4, padded(((m1 - m0) / rowBytes) * rowStride + tailBytes));
  let buffer: GPUBuffer;
  try {
    buffer = device.createBuffer({ label, size, usage: USAGE() });
  } catch (e) {
    throw new GpuResourceError(`${label}: cannot allocate ${size} bytes on the GPU (${(e as Error).message})`, { cause: e });
  }
  writer.place(src.stream, m0, m1, buffer, 0, rowBytes, rowStride);
  return buffer;
}

export function uploadF32(device: GPUDevice, values: Float32Array, label: string): GPUBuffer {
  return createBufferFrom(device, new Uint8Array(values.buffer, values.byteOffset, values.byteLength), GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label);
}

/** A norm weight (any float dtype) as f32 on the device. */
export function uploadNorm(device: GPUDevice, t: TensorData): GPUBuffer {
  if (t.stream) {
    // Streamed: only F32 norms stream (their file bytes are the f32 the kernels read).
    if (t.dtype !== 'F32') throw new UnsupportedWeightError(`tensor "${t.name}": a streamed norm must be F32, got ${t.dtype}`);
    const n = t.stream.byteLength;
    return weightBuffer(device, t, 0, n, n, n, t.name);
  }
  return uploadF32(device, toFloat32(t), t.name);
}

function rowsPerChunk(rowBytes: number, maxBindingBytes: number, name: string, rows: number): number {
  const per = Math.floor(maxBindingBytes / rowBytes);
  if (per < 1) {
    throw new GpuResourceError(`${name}: one row (${rowBytes} bytes) exceeds the binding limit of ${maxBindingBytes} bytes`);
  }
  return Math.min(per, rows);
}

/** Bytes [start, end) of a tensor, zero-padded so every row starts on a word (rowBytes → rowStride). */
function rowsWithStride(bytes: Uint8Array, row0: number, row1: number, rowBytes: number, rowStride: number): Uint8Array {
  if (rowBytes === rowStride) return bytes.subarray(row0 * rowBytes, row1 * rowBytes);
  const out = new Uint8Array((row1 - row0) * rowStride);
  for (let r = row0; r < row1; r++) out.set(bytes.subarray(r * rowBytes, (r + 1) * rowBytes), (r - row0) * rowStride);
  return out;
}

const USAGE = (): number => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;

/** Rows [rowStart, rowStart + rows) of the matrix from a dense F32/F16/BF16 row block, chunked. */
function denseChunks(device: GPUDevice, name: string, dtype: StoredDType, src: HeldBytes, rowStart: number, rows: number, cols: number, maxBindingBytes: number): GpuLinearChunk[] {
  if (!(dtype === 'F32' || dtype === 'F16' || dtype === 'BF16')) {
    throw new UnsupportedWeightError(`tensor "${name}": dense weights must be F32, F16 or BF16, got ${dtype}`);
  }
  const elem = dtype === 'F32' ? 4 : 2;
  const rowBytes = cols * elem;
  const rowStride = Math.ceil(rowBytes / 16) * 16;
  const per = rowsPerChunk(rowStride, maxBindingBytes, name, rows);
  const chunks: GpuLinearChunk[] = [];
  for (let r0 = 0; r0 < rows; r0 += per) {
    const r1 = Math.min(rows, r0 + per);
    const label = `${name}[${rowStart + r0}:${rowStart + r1}]`;
    const buffer = weightBuffer(device, src, r0 * rowBytes, r1 * rowBytes, rowBytes, rowStride, label);
    chunks.push({ rowStart: rowStart + r0, rows: r1 - r0, format: { kind: 'dense', wdtype: WDTYPE[dtype] }, buffers: [buffer] });
  }
  return chunks;
}

/** A ggml segment's rows as stored, chunked by whole rows (each chunk + its 16-byte tail within the limit). */
function ggmlChunks(device: GPUDevice, name: string, type: GgmlBlockType, src: HeldBytes, rowStart: number, rows: number, cols: number, maxBindingBytes: number): GpuLinearChunk[] {
  const rowBytes = ggmlRowBytes(type, cols);
  const per = rowsPerChunk(rowBytes, maxBindingBytes - 32, name, rows);
  const chunks: GpuLinearChunk[] = [];
  for (let r0 = 0; r0 < rows; r0 += per) {
    const r1 = Math.min(rows, r0 + per);
    const label = `${name}[${rowStart + r0}:${rowStart + r1}] ${type}`;
    const buffer = weightBuffer(device, src, r0 * rowBytes, r1 * rowBytes, rowBytes, rowBytes, label, 16);
    chunks.push({ rowStart: rowStart + r0, rows: r1 - r0, format: { kind: 'ggml', type }, buffers: [buffer] });
  }
  return chunks;
}

function chunkBytes(chunks: GpuLinearChunk[]): number {
  return chunks.reduce((a, c) => a + c.buffers.reduce((s, b) => s + b.size, 0), 0);
}

export function uploadLinear(device: GPUDevice, l: Linear, maxBindingBytes: number): GpuLinear {
  if (l.kind === 'dense') {
    const { name, dtype } = l.weight;
    const chunks = denseChunks(device, name, dtype, l.weight, 0, l.rows, l.cols, maxBindingBytes);
    return { name, rows: l.rows, cols: l.cols, chunks, bytes: chunkBytes(chunks) };
  }
  if (l.kind === 'ggml') {
    const chunks: GpuLinearChunk[] = [];
    let row = 0;
    for (const s of l.segments) {
      if (s.type === 'F32' || s.type === 'F16' || s.type === 'BF16') {
        chunks.push(...denseChunks(device, s.name, s.type, s, row, s.rows, l.cols, maxBindingBytes));
      } else {
        if (!GGML_TYPES[s.type]) throw new UnsupportedWeightError(`tensor "${s.name}": ggml type ${String(s.type)} has no WebGPU kernels`);
        chunks.push(...ggmlChunks(device, s.name, s.type, s, row, s.rows, l.cols, maxBindingBytes));
      }
      row += s.rows;
    }
    return { name: l.segments.map((s) => s.name).join('+'), rows: l.rows, cols: l.cols, chunks, bytes: chunkBytes(chunks) };
  }
  const name = l.qweight.name;
  if (l.cols % 32 !== 0) throw new UnsupportedWeightError(`tensor "${name}": q4f16_1 needs K % 32 == 0, got K = ${l.cols}`);
  const qRowBytes = l.cols / 2;                // K/8 words
  const sRowBytes = (l.cols / 32) * 2;         // K/32 f16
  const per = rowsPerChunk(Math.max(qRowBytes, padded(sRowBytes)), maxBindingBytes, name, l.rows);
  const chunks: GpuLinearChunk[] = [];
  for (let r0 = 0; r0 < l.rows; r0 += per) {
    const r1 = Math.min(l.rows, r0 + per);
    chunks.push({
      rowStart: r0, rows: r1 - r0, format: { kind: 'q4' },
      buffers: [
        weightBuffer(device, l.qweight, r0 * qRowBytes, r1 * qRowBytes, qRowBytes, qRowBytes, `${name}[${r0}:${r1}]`),
        weightBuffer(device, l.scales, r0 * sRowBytes, r1 * sRowBytes, sRowBytes, sRowBytes, `${l.scales.name}[${r0}:${r1}]`),
      ],
    });
  }
  return { name, rows: l.rows, cols: l.cols, chunks, bytes: chunkBytes(chunks) };
}

/**
 * How many chunks uploadLinear makes of `l` (without uploading): a layer needs the [T, 2I] gate|up
 * buffer and the unfused silu_mul when its gate|up matrix is more than one chunk.
 */
export function chunkCount(l: Linear, maxBindingBytes: number): number {
  const count = (rowBytes: number, rows: number): number => Math.ceil(rows / Math.max(1, Math.floor(maxBindingBytes / rowBytes)));
  if (l.kind === 'dense') return count(Math.ceil((l.cols * (l.weight.dtype === 'F32' ? 4 : 2)) / 16) * 16, l.rows);
  if (l.kind === 'q4f16_1') return count(Math.max(l.cols / 2, padded((l.cols / 32) * 2)), l.rows);
  return l.segments.reduce((a, s) => a + (s.type === 'F32' || s.type === 'F16' || s.type === 'BF16'
    ? count(Math.ceil((l.cols * (s.type === 'F32' ? 4 : 2)) / 16) * 16, s.rows)
    : Math.ceil(s.rows / Math.max(1, Math.floor((maxBindingBytes - 32) / ggmlRowBytes(s.type, l.cols))))), 0);
}

export function destroyLinear(l: GpuLinear): void {
  for (const c of l.chunks) for (const b of c.buffers) b.destroy();
}
