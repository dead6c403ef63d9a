// Node only: a WebGPU device from npm `webgpu` (Dawn). Needs a Vulkan driver (Mesa lavapipe here) and
// XDG_RUNTIME_DIR. Dawn keeps Node alive until the GPU object is released: CLIs and tests exit explicitly.
import { create, globals } from 'webgpu';
import { requestAdapter } from './adapter.ts';

let gpu: GPU | undefined;

/** The process-wide navigator.gpu stand-in (also installs GPUBufferUsage and friends as globals). */
export function nodeGPU(): GPU {
  if (!gpu) {
    Object.assign(globalThis, globals);
    gpu = create([]) as GPU;
  }
  return gpu;
}

export async function nodeAdapter(): Promise<GPUAdapter> {
  return requestAdapter(nodeGPU());
}
