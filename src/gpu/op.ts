// Prepared dispatches. Bind groups are made once (at load); a step only picks the pipeline variant and
// the grid for its token count, so a decode token costs no allocations.
import type { Bindings, BufferSet, Kernel } from './kernel.ts';
import type { Consts, PipelineCache } from './pipelines.ts';

export type Grid = [number, number, number];

/** One dispatch (or a choice of dispatches) that encodes itself for a step of n tokens. */
export interface Op {
  label: string;
  /** The label for a step of n tokens where the op runs a different kernel by n (profiles name it); absent: label. */
  labelFor?(n: number): string;
  /** Encode for a step of n tokens; returns the number of dispatches. */
  encode(pass: GPUComputePassEncoder, n: number): number;
  /** Small buffers made for this op (per-chunk uniforms), destroyed with the engine. */
  owned?: GPUBuffer[];
  /** False for a step size at which the op encodes nothing (a norm decode folds away); absent: always runs. */
  runsAt?(n: number): boolean;
}

/**
 * The op for prefill only: at n = 1 it encodes nothing, because the decode matvecs that read its output
 * fold it in (an RMSNorm: shaders/lib/x_rmsnorm.wgsl, src/gpu/layers.ts).
 */
export function prefillOnly(op: Op, why: string): Op {
  return {
    label: `${op.label} (prefill; decode: ${why})`,
    owned: op.owned,
    runsAt: (n) => n > 1,
    encode: (pass, n) => (n > 1 ? op.encode(pass, n) : 0),
  };
}

export interface KernelOpSpec<B extends Bindings> {
  label: string;
  consts: Consts;
  buffers: BufferSet<B>;
  grid(n: number): Grid;
  owned?: GPUBuffer[];
  /** For kernels with a subgroup variant (they reduce, or share loads): use it (else the fallback). */
  subgroups?: boolean;
}

/** An op running `kernel` with fixed override constants; its pipeline is compiled on first use. */
export function kernelOp<B extends Bindings>(cache: PipelineCache, kernel: Kernel<B>, spec: KernelOpSpec<B>): Op {
  const bindGroup = cache.bind(kernel, spec.buffers, spec.label);
  let pipeline: GPUComputePipeline | undefined;
  return {
    label: spec.label,
    owned: spec.owned,
    encode(pass, n) {
      pipeline ??= cache.pipeline(kernel, spec.consts, spec.subgroups ?? false);
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      const [x, y, z] = spec.grid(n);
      pass.dispatchWorkgroups(x, y, z);
      return 1;
    },
  };
}

/** Encode ops in order for a step of n tokens; returns the number of dispatches. */
export function encodeOps(pass: GPUComputePassEncoder, ops: readonly Op[], n: number): number {
  let dispatches = 0;
  for (const op of ops) dispatches += op.encode(pass, n);
  return dispatches;
}

export function destroyOps(ops: readonly Op[]): void {
  for (const op of ops) op.owned?.forEach((b) => b.destroy());
}
