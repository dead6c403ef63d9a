// One decoder layer on the device: its weights, its KV cache or recurrent state and its prepared
// decode/prefill ops, built the same way for every family (src/model/types.ts DecoderLayerWeights):
//   rmsnorm   x -> xn    input_layernorm
//   mixer     xn -> x (+=)   ops[mixer.kind]: attention (Qwen3), gated_attention, gated_delta_net (Qwen3.5)
//   rmsnorm   x -> xn    post_attention_layernorm
//   ffn       xn -> x (+=)   ops[ffn.kind]: dense SwiGLU, or moe (with a shared expert in Qwen3.5 MoE)
// The table below names each kind's row (./mixers/*.ts, ./ffns/*.ts), the way kernels/linear/formats.ts's
// WEIGHT_FORMATS names each weight format's libraries: a new kind is its file and one row here.
// A Qwen3 dense layer is 8 dispatches a prefill step and 6 a decode token when no weight is split: at
// decode both RMSNorms fold into the matvec that reads xn (qkv, gate|up; FOLD_NORMS below).
import { ropeInvFreq } from '../model/reference/ops.ts';
import type { DecoderLayerWeights, FfnKind, FfnWeights, Linear, MixerKind, MixerWeights, ModelConfig } from '../model/types.ts';
import { destroyLinear, uploadNorm } from './gpu-weights.ts';
import { denseFfn } from './ffns/dense.ts';
import { moeFfn } from './ffns/moe.ts';
import { rmsnormOp } from './kernels/common/rmsnorm.ts';
import type { GpuFfnRow, GpuLayer, LayerUpload, GpuMixerRow } from './layer-contract.ts';
import { attentionMixer } from './mixers/attention.ts';
import { gatedAttentionMixer } from './mixers/gated-attention.ts';
import { gatedDeltaNetMixer } from './mixers/gated-delta-net.ts';
import type { FoldedNorm } from './kernels/linear/linear.ts';
import { destroyOps, prefillOnly, type Op } from './op.ts';

/**
 * Fold each layer's RMSNorms into the decode matvecs that read their output (shaders/lib/x_rmsnorm.wgsl),
 * where every reader can: 2 dispatches fewer a decode layer. false: the rmsnorm ops run at decode too
 * (the dispatch-count test shows the difference).
 */
export const FOLD_NORMS = true;

const MIXERS: { [K in MixerKind]: GpuMixerRow<Extract<MixerWeights, { kind: K }>> } = {
  attention: attentionMixer,
  gated_attention: gatedAttentionMixer,
  gated_delta_net: gatedDeltaNetMixer,
};

const FFNS: { [K in FfnKind]: GpuFfnRow<Extract<FfnWeights, { kind: K }>> } = {
  dense: denseFfn,
  moe: moeFfn,
};

const mixerRow = (m: MixerWeights): GpuMixerRow<MixerWeights> => MIXERS[m.kind] as GpuMixerRow<MixerWeights>;
const ffnRow = (f: FfnWeights): GpuFfnRow<FfnWeights> => FFNS[f.kind] as GpuFfnRow<FfnWeights>;

/** The linears of a layer the engine uploads (mixer's, then ffn's). */
export function layerLinears(w: DecoderLayerWeights): Linear[] {
  return [...mixerRow(w.mixer).linears(w.mixer), ...ffnRow(w.ffn).linears(w.ffn)];
}

/** Refuses by name, before any device is asked for, a layer whose shapes the kernels cannot run. */
export function checkLayer(cfg: ModelConfig, w: DecoderLayerWeights): void {
  mixerRow(w.mixer).check?.(cfg, w.mixer, w.index);
  ffnRow(w.ffn).check?.(cfg, w.ffn, w.index);
}

/** norm → mixer → norm → ffn on the device. `u` names the layer (index, name). */
export function uploadLayer(u: Omit<LayerUpload, 'index' | 'name'>, w: DecoderLayerWeights): GpuLayer {
  const { device, cache, cfg, act } = u;
  const { hiddenSize: H, rmsNormEps: eps } = cfg;
  const at: LayerUpload = { ...u, index: w.index, name: `layer ${w.index}` };
  const [inputNorm, postNorm] = [w.inputNorm, w.postNorm].map((t) => uploadNorm(device, t)) as [GPUBuffer, GPUBuffer];
  const foldable = (weight: GPUBuffer, name: string): FoldedNorm | undefined =>
    FOLD_NORMS ? { x: act.x, weight, eps, name } : undefined;
  const mixer = mixerRow(w.mixer).upload({ ...at, norm: foldable(inputNorm, 'input_layernorm') }, w.mixer);
  const ffn = ffnRow(w.ffn).upload({ ...at, norm: foldable(postNorm, 'post_attention_layernorm') }, w.ffn);
  const step = act.step;
  // A norm whose readers all fold it runs for prefill only (decode: 6 dispatches a Qwen3 dense layer, not 8).
  const norm = (weight: GPUBuffer, name: string, folded: boolean | undefined): Op => {
    const op = rmsnormOp(cache, { step, x: act.x, weight, y: act.xn }, H, eps, `${at.name} ${name}`);
    return folded ? prefillOnly(op, 'folded into the matvecs that read it') : op;
  };
  return {
    ...mixer,
    index: w.index,
    linears: [...mixer.linears, ...ffn.linears],
    norms: [inputNorm, postNorm, ...mixer.norms],
    ops: [
      norm(inputNorm, 'input_layernorm', mixer.normFolded),
      ...mixer.ops,
      norm(postNorm, 'post_attention_layernorm', ffn.normFolded),
      ...ffn.ops,
    ],
    kvLength: 0,
  };
}

export function destroyLayer(l: GpuLayer): void {
  l.linears.forEach(destroyLinear);
  l.norms.forEach((b) => b.destroy());
  l.kcache?.destroy();
  l.vcache?.destroy();
  l.state?.conv.destroy();
  l.state?.delta.destroy();
  destroyOps(l.ops);
}

/**
 * RoPE cos/sin table [ctx, D/2] as (cos, sin) f32 pairs, computed exactly like the reference
 * (src/model/reference/ops.ts ropeNeox): angle = f32(pos · inv_freq_i), then f32(cos), f32(sin).
 */
export function ropeTable(ctx: number, headDim: number, theta: number): Float32Array {
  const half = headDim / 2;
  const inv = ropeInvFreq(headDim, theta);
  const table = new Float32Array(ctx * half * 2);
  for (let pos = 0; pos < ctx; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(pos * inv[i]!);
      table[(pos * half + i) * 2] = Math.cos(angle);
      table[(pos * half + i) * 2 + 1] = Math.sin(angle);
    }
  }
  return table;
}
