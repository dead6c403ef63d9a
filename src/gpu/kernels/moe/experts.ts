// MoE expert variants of the linear kernels. A linear kernel is a structure (shaders/matvec.wgsl,
// matmul_rows.wgsl, matmul_tiles.wgsl) whose workgroups take their rows, x and y from a job library: plain
// matrices use shaders/lib/job_plain.wgsl; stacked experts use shaders/lib/job_experts.wgsl, which reads
// the routing buffer, so a decode workgroup computes rows of its slot's chosen expert only and a prefill
// workgroup the tokens grouped to its expert. The variant is the same kernel with that library and
// three more bindings; made once per kernel.
import jobExperts from '../../../../shaders/lib/job_experts.wgsl?raw';
import { defineKernel, read, rw, uniformStruct, type Bindings, type Kernel } from '../../kernel.ts';
import { jobPlain } from '../linear/linear-contract.ts';

/**
 * A chunk of stacked experts: it holds experts [e0, e1) of num_experts, rows_per_expert weight rows
 * each; x_div maps a pair to its x row (k for gate|up, 1 for down); max_pairs = maxBatch·k sizes the
 * routing buffer's parts; counter_base is this layer's place in the bytes-read counter, row_bytes the
 * bytes of one stored row (what a row read adds to it).
 */
export const EXPERTS = uniformStruct('Experts', ['e0', 'e1', 'rows_per_expert', 'x_div', 'max_pairs', 'num_experts', 'counter_base', 'row_bytes']);

const EXPERT_BINDINGS = {
  route: read('array<u32>'),                 // the routing buffer (see job_experts.wgsl)
  bytes_read: rw('array<atomic<u32>>'),      // [layers, E] weight bytes the decode matvecs read per expert
  experts: EXPERTS,
};

export type ExpertBindings<B extends Bindings> = B & typeof EXPERT_BINDINGS;

const variants = new WeakMap<Kernel, Kernel>();

/** The expert variant of a linear kernel (its job library swapped, the routing bindings added). */
export function expertVariant<B extends Bindings>(k: Kernel<B>): Kernel<ExpertBindings<B>> {
  let v = variants.get(k as Kernel);
  if (!v) {
    const libs = k.libs ?? [];
    if (!libs.includes(jobPlain)) throw new Error(`${k.name}: not a linear kernel with a job library`);
    v = defineKernel({
      ...k, name: `${k.name}_experts`, family: k.family ?? k.name,
      libs: libs.map((l) => (l === jobPlain ? jobExperts : l)),
      bindings: { ...k.bindings, ...EXPERT_BINDINGS },
    }) as Kernel;
    variants.set(k as Kernel, v);
  }
  return v as Kernel<ExpertBindings<B>>;
}
