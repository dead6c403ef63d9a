// The KV cache of a mixer that keeps one (attention, gated attention): K and V buffers as f16 pairs or
// q8_0 blocks (../kernels/attention/kv-layout.ts), and how a step's keys and values get there: written
// as f16 by qk_norm_rope itself, or (q8_0) staged in f32 by it and quantized by kv_store_q8_0.
import type { KvCacheType } from '../../model/kv-quant.ts';
import { GpuResourceError } from '../errors.ts';
import { kvBufferBytes, type KvLayout } from '../kernels/attention/kv-layout.ts';
import { kvStoreQ8Op } from '../kernels/attention/kv-store-q8-0.ts';
import type { HeadShape } from '../kernels/attention/qk-norm-rope.ts';
import type { Activations } from '../layer-contract.ts';
import type { Op } from '../op.ts';
import type { PipelineCache } from '../pipelines.ts';

export interface KvCacheBuffers {
  kcache: GPUBuffer;
  vcache: GPUBuffer;
  layout: KvLayout;
  /** Where qk_norm_rope writes K and V: the cache (f16) or the stage (q8_0, then `store` runs). */
  kTarget: GPUBuffer;
  vTarget: GPUBuffer;
  stage: boolean;
  /** The ops after qk_norm_rope that put a step's K/V into the cache (none for f16). */
  store: Op[];
}

/** A KV cache pair for an attention layer, checked against the binding limit. */
export function createKvCache(
  device: GPUDevice, cache: PipelineCache, act: Activations, index: number, ctx: number, s: HeadShape, maxBindingBytes: number, type: KvCacheType = 'f16',
): KvCacheBuffers {
  const layout: KvLayout = { type, ctx };
  const kvBytes = kvBufferBytes(s, layout);
  if (kvBytes > maxBindingBytes) {
    throw new GpuResourceError(`layer ${index}: a KV cache of ${ctx} tokens needs ${kvBytes} bytes per buffer, over the binding limit of ${maxBindingBytes}; choose a smaller ctx`);
  }
  const kvUsage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const kcache = device.createBuffer({ label: `layer ${index} K cache`, size: kvBytes, usage: kvUsage });
  const vcache = device.createBuffer({ label: `layer ${index} V cache`, size: kvBytes, usage: kvUsage });
  if (type === 'f16') return { kcache, vcache, layout, kTarget: kcache, vTarget: vcache, stage: false, store: [] };
  const st = act.kvStage;
  if (!st) throw new Error(`layer ${index}: a q8_0 KV cache but the activations have no K/V stage`);
  const store = kvStoreQ8Op(cache, { step: act.step, kstage: st.k, vstage: st.v, kcache, vcache }, s, ctx, `layer ${index} kv_store_q8_0`);
  return { kcache, vcache, layout, kTarget: st.k, vTarget: st.v, stage: true, store: [store] };
}
