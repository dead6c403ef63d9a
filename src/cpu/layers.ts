// The CPU engine's layer table: every decoder layer is
//   x += mixer(rms(x) · input_layernorm);  x += ffn(rms(x) · post_attention_layernorm)
// and the mixer and ffn run from the row of their kind (./mixers/*.ts, ./ffns/*.ts), as in
// src/model/reference/layer-table.ts and src/gpu/layers.ts. A new kind is its file and one row here.
import { tensorToF32 } from '../model/reference/ops.ts';
import type { DecoderLayerWeights, FfnKind, FfnWeights, Linear, MixerKind, MixerWeights, ModelConfig } from '../model/types.ts';
import { CpuUnsupportedError } from './errors.ts';
import { BLOCK_SIZE, linearParts } from './formats.ts';
import { denseFfn } from './ffns/dense.ts';
import { moeFfn } from './ffns/moe.ts';
import type { CpuFfnRow, CpuFfnStep, CpuLayerContext, CpuMixerRow, CpuMixerStep } from './layer-contract.ts';
import { attentionMixer } from './mixers/attention.ts';
import { gatedAttentionMixer } from './mixers/gated-attention.ts';
import { gatedDeltaNetMixer } from './mixers/gated-delta-net.ts';
import type { WasmKernels } from './wasm-kernels.ts';

const MIXERS: { [K in MixerKind]: CpuMixerRow<Extract<MixerWeights, { kind: K }>> } = {
  attention: attentionMixer,
  gated_attention: gatedAttentionMixer,
  gated_delta_net: gatedDeltaNetMixer,
};

const FFNS: { [K in FfnKind]: CpuFfnRow<Extract<FfnWeights, { kind: K }>> } = {
  dense: denseFfn,
  moe: moeFfn,
};

const mixerRow = (m: MixerWeights): CpuMixerRow<MixerWeights> => MIXERS[m.kind] as CpuMixerRow<MixerWeights>;
const ffnRow = (f: FfnWeights): CpuFfnRow<FfnWeights> => FFNS[f.kind] as CpuFfnRow<FfnWeights>;

/** The linears a layer places (mixer's, then ffn's). */
export function layerLinears(w: DecoderLayerWeights): Linear[] {
  return [...mixerRow(w.mixer).linears(w.mixer), ...ffnRow(w.ffn).linears(w.ffn)];
}

/** Refuses by name a linear the kernels cannot read: K not whole blocks of a part's format. */
export function checkLinear(l: Linear, where: string): void {
  for (const p of linearParts(l)) {
    if (l.cols % BLOCK_SIZE[p.fmt] !== 0) throw new CpuUnsupportedError(`${where}: ${p.name} has rows of ${l.cols} values, not whole ${BLOCK_SIZE[p.fmt]}-value blocks`);
  }
}

export function checkLayer(cfg: ModelConfig, w: DecoderLayerWeights): void {
  for (const l of layerLinears(w)) checkLinear(l, `layer ${w.index}`);
  if (cfg.headDim % 2 !== 0) throw new CpuUnsupportedError(`head_dim ${cfg.headDim} must be even for RoPE`);
}

/** A layer placed in the kernels' memory: its norms and its bound mixer and ffn steps. */
export interface CpuLayer {
  index: number;
  inputNorm: number;           // address of f32 [H]
  postNorm: number;            // address of f32 [H]
  mixer: CpuMixerStep;
  ffn: CpuFfnStep;
  bytes: number;               // weight bytes placed
}

export function placeLayer(k: WasmKernels, w: DecoderLayerWeights): CpuLayer {
  const before = k.used;
  const inputNorm = k.put(tensorToF32(w.inputNorm)), postNorm = k.put(tensorToF32(w.postNorm));
  const mixer = mixerRow(w.mixer).place(k, w.mixer, w.index);
  const ffn = ffnRow(w.ffn).place(k, w.ffn, w.index);
  return { index: w.index, inputNorm, postNorm, mixer, ffn, bytes: k.used - before };
}

/** One decoder layer in place on x [n, H] at address xp, tokens at positions pos0... */
export function layerForward(layer: CpuLayer, ctx: CpuLayerContext, pos0: number, n: number, xp: number): void {
  const { k, config: c } = ctx;
  const H = c.hiddenSize;
  k.frame(() => {
    const xn = k.alloc(n * H * 4);
    k.rmsnormAt(xp, layer.inputNorm, xn, n, H, c.rmsNormEps);
    k.addAt(xp, layer.mixer(ctx, pos0, n, xn), n * H);
  });
  k.frame(() => {
    const hn = k.alloc(n * H * 4);
    k.rmsnormAt(xp, layer.postNorm, hn, n, H, c.rmsNormEps);
    k.addAt(xp, layer.ffn(ctx, n, hn), n * H);
  });
}
