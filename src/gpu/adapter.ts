// WebGPU adapter discovery, shared by the browser and Node (npm `webgpu`).
// Returns a plain description the UI and the room's capability report can show.

export interface AdapterInfoSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  shaderF16: boolean;
  subgroups: boolean;
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxStorageBuffersPerShaderStage: number;
}

export class WebGPUUnavailableError extends Error {
  override name = 'WebGPUUnavailableError';
  constructor(message: string) {
    super(message);
  }
}

/** Request an adapter or throw a WebGPUUnavailableError that says what the user can do. */
export async function requestAdapter(gpu: GPU | undefined = globalThis.navigator?.gpu): Promise<GPUAdapter> {
  if (!gpu) {
    throw new WebGPUUnavailableError(
      'This browser has no WebGPU. Use a recent Chrome, Edge or Safari 26+, or enable WebGPU in the browser flags.',
    );
  }
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) {
    throw new WebGPUUnavailableError('WebGPU is present but no GPU adapter was found (blocked GPU or driver).');
  }
  return adapter;
}

export function summarizeAdapter(adapter: GPUAdapter): AdapterInfoSummary {
  const info = adapter.info ?? ({} as GPUAdapterInfo);
  const fallback = (adapter as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter
    ?? (info as unknown as { isFallbackAdapter?: boolean }).isFallbackAdapter ?? false;
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
    isFallbackAdapter: Boolean(fallback),
    shaderF16: adapter.features.has('shader-f16'),
    subgroups: adapter.features.has('subgroups'),
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
    maxComputeInvocationsPerWorkgroup: adapter.limits.maxComputeInvocationsPerWorkgroup,
    maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage,
  };
}

/** One line for people: "SwiftShader (fallback) · 1 GiB bindings · no f16". */
export function adapterLabel(s: AdapterInfoSummary): string {
  const name = s.description || [s.vendor, s.architecture, s.device].filter(Boolean).join(' ') || 'unknown GPU';
  const gib = s.maxStorageBufferBindingSize / 2 ** 30;
  const bind = gib >= 1 ? `${gib.toFixed(gib % 1 ? 1 : 0)} GiB` : `${Math.round(s.maxStorageBufferBindingSize / 2 ** 20)} MiB`;
  return `${name}${s.isFallbackAdapter ? ' (fallback)' : ''} · ${bind} bindings · ${s.shaderF16 ? 'f16' : 'no f16'}`;
}
