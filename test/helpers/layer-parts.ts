// A loaded layer's mixer or ffn of the kind a test expects; any other kind (or no layer) throws, so a
// test that reads an attention field off a layer also checks that the layer has attention.
import type { DecoderLayerWeights, FfnKind, FfnWeights, MixerKind, MixerWeights } from '../../src/model/types.ts';

export function mixerOf<K extends MixerKind>(l: DecoderLayerWeights | undefined, kind: K): Extract<MixerWeights, { kind: K }> {
  if (!l) throw new Error(`no layer (expected a ${kind} mixer)`);
  if (l.mixer.kind !== kind) throw new Error(`layer ${l.index}: mixer ${l.mixer.kind}, expected ${kind}`);
  return l.mixer as Extract<MixerWeights, { kind: K }>;
}

export function ffnOf<K extends FfnKind>(l: DecoderLayerWeights | undefined, kind: K): Extract<FfnWeights, { kind: K }> {
  if (!l) throw new Error(`no layer (expected a ${kind} ffn)`);
  if (l.ffn.kind !== kind) throw new Error(`layer ${l.index}: ffn ${l.ffn.kind}, expected ${kind}`);
  return l.ffn as Extract<FfnWeights, { kind: K }>;
}
