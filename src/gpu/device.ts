// Device acquisition for the engine: asks for the adapter's real storage limits (the defaults are far
// lower: 128 MiB binding, 256 MiB buffer), for shader-f16 where the adapter has it and it is wanted, and
// for subgroups where the adapter has them (the matvec's reduction; a workgroup-memory one otherwise).
import { requestAdapter } from './adapter.ts';

export interface EngineDeviceOptions {
  adapter?: GPUAdapter;
  useF16?: boolean;            // default: use shader-f16 when the adapter has it
  subgroups?: boolean;         // default: use subgroups when the adapter has them
}

export async function requestEngineDevice(opts: EngineDeviceOptions = {}): Promise<GPUDevice> {
  const adapter = opts.adapter ?? await requestAdapter();
  const wantF16 = opts.useF16 !== false && adapter.features.has('shader-f16');
  const wantSubgroups = opts.subgroups !== false && adapter.features.has('subgroups');
  const features: GPUFeatureName[] = [];
  if (wantF16) features.push('shader-f16');
  if (wantSubgroups) features.push('subgroups' as GPUFeatureName);
  const a = adapter.limits;
  return adapter.requestDevice({
    label: 'pooled-engine',
    requiredFeatures: features,
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
