// Compute pipelines compiled once per device and cached by key "kernel:path:wg:consts" (override
// constants sorted by name). Bind group layouts are explicit per kernel (from its binding declarations),
// so one bind group serves every variant (decode or prefill constants) of a kernel.
import { hasSubgroupVariant, kernelModuleSource, type Bindings, type BufferSet, type Kernel } from './kernel.ts';
import { defaultTuning, type Tuning } from './tuning.ts';

export type Consts = Record<string, number>;

interface Layout {
  group: GPUBindGroupLayout;
  pipeline: GPUPipelineLayout;
}

export class PipelineCache {
  private modules = new Map<string, GPUShaderModule>();
  private layouts = new Map<Kernel, Layout>();
  private pipelines = new Map<string, GPUComputePipeline>();

  readonly tuning: Tuning;

  constructor(readonly device: GPUDevice, readonly useF16: boolean, tuning?: Tuning) {
    this.tuning = tuning ?? defaultTuning(device);
  }

  /** The same compiled pipelines, with op builders reading another tuning (the start-up tuning uses it). */
  withTuning(tuning: Tuning): PipelineCache {
    const view = new PipelineCache(this.device, this.useF16, tuning);
    view.modules = this.modules;
    view.layouts = this.layouts;
    view.pipelines = this.pipelines;
    return view;
  }

  /** "kernel:path:wg:consts" where path is f16 or f32, and +sg for the subgroup variant. */
  static key(kernel: Kernel, useF16: boolean, consts: Consts, subgroups = false): string {
    const wg = consts.WG ?? 'default';
    const rest = Object.keys(consts).filter((k) => k !== 'WG').sort().map((k) => `${k}=${consts[k]}`).join(',');
    return `${kernel.name}:${useF16 ? 'f16' : 'f32'}${subgroups && hasSubgroupVariant(kernel) ? '+sg' : ''}:${wg}:${rest}`;
  }

  private layout(kernel: Kernel): Layout {
    let l = this.layouts.get(kernel);
    if (!l) {
      const entries: GPUBindGroupLayoutEntry[] = kernel.names.map((name, binding) => {
        const access = kernel.bindings[name]!.access;
        return {
          binding,
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type: access === 'uniform' ? 'uniform' : access === 'read' ? 'read-only-storage' : 'storage' },
        };
      });
      const group = this.device.createBindGroupLayout({ label: kernel.name, entries });
      l = { group, pipeline: this.device.createPipelineLayout({ label: kernel.name, bindGroupLayouts: [group] }) };
      this.layouts.set(kernel, l);
    }
    return l;
  }

  pipeline(kernel: Kernel, consts: Consts, subgroups = false): GPUComputePipeline {
    const key = PipelineCache.key(kernel, this.useF16, consts, subgroups);
    let p = this.pipelines.get(key);
    if (!p) {
      const sg = subgroups && hasSubgroupVariant(kernel);
      const moduleKey = `${kernel.name}${sg ? '+sg' : ''}`;
      let module = this.modules.get(moduleKey);
      if (!module) {
        module = this.device.createShaderModule({ label: moduleKey, code: kernelModuleSource(kernel, { useF16: this.useF16, subgroups: sg }) });
        this.modules.set(moduleKey, module);
      }
      p = this.device.createComputePipeline({
        label: key,
        layout: this.layout(kernel).pipeline,
        compute: { module, entryPoint: 'main', constants: consts },
      });
      this.pipelines.set(key, p);
    }
    return p;
  }

  /** A bind group for `kernel` over whole buffers, given by binding name. */
  bind<B extends Bindings>(kernel: Kernel<B>, buffers: BufferSet<B>, label?: string): GPUBindGroup {
    const entries = kernel.names.map((name, binding) => {
      const buffer = buffers[name as keyof B];
      if (!buffer) throw new Error(`${kernel.name}: no buffer for binding ${name}`);
      return { binding, resource: { buffer } };
    });
    return this.device.createBindGroup({ label: label ?? kernel.name, layout: this.layout(kernel).group, entries });
  }

  /** Compiled pipelines. */
  get size(): number {
    return this.pipelines.size;
  }
}
