// Compute pipelines compiled once per device and cached by key "kernel:path:wg:consts" (override
// constants sorted by name). Bind group layouts are explicit per kernel, so one bind group serves every
// variant (decode or prefill tile) of a kernel.
import { KERNELS, kernelModuleSource, type KernelName } from './kernels.ts';
import { defaultTuning, type MatvecTuning } from './tuning.ts';

export type Consts = Record<string, number>;

export class PipelineCache {
  private readonly modules = new Map<KernelName, GPUShaderModule>();
  private readonly layouts = new Map<KernelName, { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout }>();
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  compiled = 0;

  readonly tuning: MatvecTuning;

  constructor(readonly device: GPUDevice, readonly useF16: boolean, tuning?: MatvecTuning) {
    this.tuning = tuning ?? defaultTuning(device);
  }

  static key(kernel: KernelName, useF16: boolean, consts: Consts): string {
    const wg = consts.WG ?? 'default';
    const rest = Object.keys(consts).filter((k) => k !== 'WG').sort().map((k) => `${k}=${consts[k]}`).join(',');
    return `${kernel}:${useF16 ? 'f16' : 'f32'}:${wg}:${rest}`;
  }

  layout(kernel: KernelName): { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout } {
    let l = this.layouts.get(kernel);
    if (!l) {
      const entries: GPUBindGroupLayoutEntry[] = KERNELS[kernel].bindings.map((kind, binding) => ({
        binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: kind === 'uniform' ? 'uniform' : kind === 'read' ? 'read-only-storage' : 'storage' },
      }));
      const group = this.device.createBindGroupLayout({ label: kernel, entries });
      l = { group, pipeline: this.device.createPipelineLayout({ label: kernel, bindGroupLayouts: [group] }) };
      this.layouts.set(kernel, l);
    }
    return l;
  }

  get(kernel: KernelName, consts: Consts): GPUComputePipeline {
    const key = PipelineCache.key(kernel, this.useF16, consts);
    let p = this.pipelines.get(key);
    if (!p) {
      let module = this.modules.get(kernel);
      if (!module) {
        module = this.device.createShaderModule({ label: kernel, code: kernelModuleSource(kernel, this.useF16) });
        this.modules.set(kernel, module);
      }
      p = this.device.createComputePipeline({
        label: key,
        layout: this.layout(kernel).pipeline,
        compute: { module, entryPoint: 'main', constants: consts },
      });
      this.pipelines.set(key, p);
      this.compiled++;
    }
    return p;
  }

  /** A bind group for `kernel` over buffers in binding order (whole buffers). */
  bind(kernel: KernelName, buffers: GPUBuffer[], label?: string): GPUBindGroup {
    const kinds = KERNELS[kernel].bindings;
    if (buffers.length !== kinds.length) {
      throw new Error(`${kernel}: ${buffers.length} buffers for ${kinds.length} bindings`);
    }
    return this.device.createBindGroup({
      label: label ?? kernel,
      layout: this.layout(kernel).group,
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  }

  get size(): number {
    return this.pipelines.size;
  }
}

/** Spread `count` workgroups over x (≤ 65535) and y. Kernels recover the index as y·nx + x. */
export function grid2d(count: number): [number, number] {
  const x = Math.max(1, Math.min(count, 65535));
  return [x, Math.max(1, Math.ceil(count / x))];
}
