// The KV cache of a mixer that keeps one (attention, gated attention): K and V as f16 pairs in u32.
import { GpuResourceError } from '../errors.ts';

/** A KV cache pair for an attention layer, checked against the binding limit. */
export function createKvCache(device: GPUDevice, index: number, ctx: number, kvWidth: number, maxBindingBytes: number): { kcache: GPUBuffer; vcache: GPUBuffer } {
  const kvBytes = ctx * kvWidth * 2;
  if (kvBytes > maxBindingBytes) {
    throw new GpuResourceError(`layer ${index}: a KV cache of ${ctx} tokens needs ${kvBytes} bytes per buffer, over the binding limit of ${maxBindingBytes}; choose a smaller ctx`);
  }
  const kvUsage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  return {
    kcache: device.createBuffer({ label: `layer ${index} K cache`, size: kvBytes, usage: kvUsage }),
    vcache: device.createBuffer({ label: `layer ${index} V cache`, size: kvBytes, usage: kvUsage }),
  };
}
