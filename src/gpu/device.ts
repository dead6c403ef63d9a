// Device acquisition for the engine: asks for the adapter's real storage limits (the defaults are far
// lower: 128 MiB binding, 256 MiB buffer) and for shader-f16 where the adapter has it and it is wanted.
import { requestAdapter } from './adapter.ts';

export interface EngineDeviceOptions {
  adapter?: GPUAdapter;
  useF16?: boolean;            // default: use shader-f16 when the adapter has it
}

export async function requestEngineDevice(opts: EngineDeviceOptions = {}): Promise<GPUDevice> {
  const adapter = opts.adapter ?? await requestAdapter();
  const wantF16 = opts.useF16 !== false && adapter.features.has('shader-f16');
  const a = adapter.limits;
  return adapter.requestDevice({
    label: 'pooled-engine',
    requiredFeatures: wantF16 ? ['shader-f16'] : [],
    requiredLimits: {
      maxStorageBufferBindingSize: a.maxStorageBufferBindingSize,
      maxBufferSize: a.maxBufferSize,
      maxStorageBuffersPerShaderStage: Math.min(a.maxStorageBuffersPerShaderStage, 10),
      maxComputeWorkgroupStorageSize: a.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: Math.min(a.maxComputeInvocationsPerWorkgroup, 256),
      maxComputeWorkgroupSizeX: Math.min(a.maxComputeWorkgroupSizeX, 256),
    },
  });
}
