// Weights on the device. A Linear [N, K] becomes row chunks, each within maxBindingBytes, so a tensor
// larger than the binding limit (a 151k-row embedding) is split transparently; kernels run per chunk.
//   dense: one u32 buffer [rows, rowWords]: F32 one value a word, F16/BF16 two, each row padded with zeros
//          to a whole 16 bytes so kernels read it in vec4<u32> blocks
//   q4f16_1: qweight u32 [rows, K/8] and scales (f16 pairs) [rows, K/32], sliced by the same rows
import { toFloat32 } from '../model/tensor-utils.ts';
import type { Linear, TensorData } from '../model/types.ts';
import { GpuResourceError, UnsupportedWeightError } from './errors.ts';

export interface GpuLinearChunk {
  rowStart: number;
  rows: number;
  buffers: GPUBuffer[];        // dense: [weight]; q4: [qweight, scales]
}

export interface GpuLinear {
  kind: 'dense' | 'q4';
  wdtype: number;              // dense: 0 F32, 1 F16, 2 BF16; q4: -1
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

export function createBufferFrom(device: GPUDevice, data: Uint8Array, usage: number, label: string): GPUBuffer {
  const size = Math.max(4, padded(data.byteLength));
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

export function uploadF32(device: GPUDevice, values: Float32Array, label: string): GPUBuffer {
  return createBufferFrom(device, new Uint8Array(values.buffer, values.byteOffset, values.byteLength), GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label);
}

/** A norm weight (any float dtype) as f32 on the device. */
export function uploadNorm(device: GPUDevice, t: TensorData): GPUBuffer {
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

export function uploadLinear(device: GPUDevice, l: Linear, maxBindingBytes: number): GpuLinear {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const chunks: GpuLinearChunk[] = [];
  let bytes = 0;
  if (l.kind === 'dense') {
    const { name, dtype } = l.weight;
    if (!(dtype === 'F32' || dtype === 'F16' || dtype === 'BF16')) {
      throw new UnsupportedWeightError(`tensor "${name}": dense weights must be F32, F16 or BF16, got ${dtype}`);
    }
    const elem = dtype === 'F32' ? 4 : 2;
    const rowBytes = l.cols * elem;
    const rowStride = Math.ceil(rowBytes / 16) * 16;
    const per = rowsPerChunk(rowStride, maxBindingBytes, name, l.rows);
    for (let r0 = 0; r0 < l.rows; r0 += per) {
      const r1 = Math.min(l.rows, r0 + per);
      const data = rowsWithStride(l.weight.bytes, r0, r1, rowBytes, rowStride);
      chunks.push({ rowStart: r0, rows: r1 - r0, buffers: [createBufferFrom(device, data, usage, `${name}[${r0}:${r1}]`)] });
      bytes += data.byteLength;
    }
    return { kind: 'dense', wdtype: WDTYPE[dtype], name, rows: l.rows, cols: l.cols, chunks, bytes };
  }
  if (l.kind === 'ggml') throw new UnsupportedWeightError(`tensor "${l.segments[0]?.name}": GGUF block types have no WebGPU kernels yet`);
  const name = l.qweight.name;
  if (l.cols % 32 !== 0) throw new UnsupportedWeightError(`tensor "${name}": q4f16_1 needs K % 32 == 0, got K = ${l.cols}`);
  const qRowBytes = l.cols / 2;                // K/8 words
  const sRowBytes = (l.cols / 32) * 2;         // K/32 f16
  const per = rowsPerChunk(Math.max(qRowBytes, padded(sRowBytes)), maxBindingBytes, name, l.rows);
  for (let r0 = 0; r0 < l.rows; r0 += per) {
    const r1 = Math.min(l.rows, r0 + per);
    const q = l.qweight.bytes.subarray(r0 * qRowBytes, r1 * qRowBytes);
    const s = l.scales.bytes.subarray(r0 * sRowBytes, r1 * sRowBytes);
    chunks.push({
      rowStart: r0, rows: r1 - r0,
      buffers: [createBufferFrom(device, q, usage, `${name}[${r0}:${r1}]`), createBufferFrom(device, s, usage, `${l.scales.name}[${r0}:${r1}]`)],
    });
    bytes += q.byteLength + padded(s.byteLength);
  }
  return { kind: 'q4', wdtype: -1, name, rows: l.rows, cols: l.cols, chunks, bytes };
}

export function destroyLinear(l: GpuLinear): void {
  for (const c of l.chunks) for (const b of c.buffers) b.destroy();
}
