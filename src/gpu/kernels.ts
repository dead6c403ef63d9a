// The kernel registry: each WGSL kernel (shaders/*.wgsl, one per file) with its binding signature.
// A kernel's bindings are group 0, in order; "uniform" / "read" (read-only storage) / "rw" (storage).
import attention from '../../shaders/attention.wgsl?raw';
import copy from '../../shaders/copy.wgsl?raw';
import embedDense from '../../shaders/embed_dense.wgsl?raw';
import embedQ4 from '../../shaders/embed_q4.wgsl?raw';
import decodeF16 from '../../shaders/lib/decode_f16.wgsl?raw';
import decodeF32 from '../../shaders/lib/decode_f32.wgsl?raw';
import matvecDense from '../../shaders/matvec_dense.wgsl?raw';
import matvecQ4 from '../../shaders/matvec_q4.wgsl?raw';
import qkNormRope from '../../shaders/qk_norm_rope.wgsl?raw';
import rmsnorm from '../../shaders/rmsnorm.wgsl?raw';
import siluMul from '../../shaders/silu_mul.wgsl?raw';
import topkBlocks from '../../shaders/topk_blocks.wgsl?raw';

export type BindingKind = 'uniform' | 'read' | 'rw';

export interface KernelSpec {
  source: string;
  bindings: BindingKind[];
}

export const KERNELS = {
  embed_dense: { source: embedDense, bindings: ['uniform', 'read', 'read', 'rw', 'uniform'] },
  embed_q4: { source: embedQ4, bindings: ['uniform', 'read', 'read', 'read', 'rw', 'uniform'] },
  rmsnorm: { source: rmsnorm, bindings: ['uniform', 'read', 'read', 'rw'] },
  matvec_dense: { source: matvecDense, bindings: ['uniform', 'read', 'read', 'rw', 'uniform'] },
  matvec_q4: { source: matvecQ4, bindings: ['uniform', 'read', 'read', 'read', 'rw', 'uniform'] },
  qk_norm_rope: { source: qkNormRope, bindings: ['uniform', 'read', 'read', 'read', 'read', 'rw', 'rw', 'rw'] },
  attention: { source: attention, bindings: ['uniform', 'read', 'read', 'read', 'rw'] },
  silu_mul: { source: siluMul, bindings: ['uniform', 'read', 'rw'] },
  topk_blocks: { source: topkBlocks, bindings: ['uniform', 'read', 'read', 'rw'] },
  copy: { source: copy, bindings: ['read', 'rw'] },
} satisfies Record<string, KernelSpec>;

export type KernelName = keyof typeof KERNELS;

/**
 * The WGSL module text for a kernel: the packed-number helpers of the chosen path (native f16 types
 * or f32 unpack builtins, shaders/lib/) followed by the kernel file. Both are whole files.
 */
export function kernelModuleSource(kernel: KernelName, useF16: boolean): string {
  return `${useF16 ? decodeF16 : decodeF32}\n${KERNELS[kernel].source}`;
}
