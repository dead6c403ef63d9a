// The reference engine's layer table: every decoder layer is
//   x += mixer(rms(x) · input_layernorm);  x += ffn(rms(x) · post_attention_layernorm)
// and the mixer and ffn run from the row of their kind. A new kind is its weights shape in ../types.ts,
// its file under ./mixers or ./ffns and one row here (docs/add-a-model-family.md).
import type { DecoderLayerWeights, FfnKind, FfnWeights, MixerKind, MixerWeights } from '../types.ts';
import { denseFfn } from './ffns/dense.ts';
import { moeFfn } from './ffns/moe.ts';
import type { ReferenceFfnRow, FfnStep, LayerContext, ReferenceMixerRow, MixerStep } from './layer-contract.ts';
import { attentionMixer } from './mixers/attention.ts';
import { gatedAttentionMixer } from './mixers/gated-attention.ts';
import { gatedDeltaNetMixer } from './mixers/gated-delta-net.ts';
import { addInPlace, rmsNorm, tensorToF32 } from './ops.ts';

const MIXERS: { [K in MixerKind]: ReferenceMixerRow<Extract<MixerWeights, { kind: K }>> } = {
  attention: attentionMixer,
  gated_attention: gatedAttentionMixer,
  gated_delta_net: gatedDeltaNetMixer,
};

const FFNS: { [K in FfnKind]: ReferenceFfnRow<Extract<FfnWeights, { kind: K }>> } = {
  dense: denseFfn,
  moe: moeFfn,
};

/** A layer ready to run: its norms decoded to f32, its mixer and ffn bound to their weights. */
export interface BoundLayer {
  index: number;
  input: Float32Array;         // [H]
  post: Float32Array;          // [H]
  mixer: MixerStep;
  ffn: FfnStep;
}

export function bindLayer(w: DecoderLayerWeights): BoundLayer {
  const mixer = MIXERS[w.mixer.kind] as ReferenceMixerRow<MixerWeights>;
  const ffn = FFNS[w.ffn.kind] as ReferenceFfnRow<FfnWeights>;
  return {
    index: w.index, input: tensorToF32(w.inputNorm), post: tensorToF32(w.postNorm),
    mixer: mixer.bind(w.mixer, w.index), ffn: ffn.bind(w.ffn, w.index),
  };
}

/** One decoder layer, in place on the residual stream x [n, H] at `positions`. */
export function layerForward(layer: BoundLayer, ctx: LayerContext, positions: number[], x: Float32Array): void {
  const eps = ctx.config.rmsNormEps;
  const xn = rmsNorm(x, layer.input, eps);                                   // [n, H]
  addInPlace(x, layer.mixer(ctx, positions, xn));
  const hn = rmsNorm(x, layer.post, eps);                                    // [n, H]
  addInPlace(x, layer.ffn(ctx, hn, positions.length));
}
