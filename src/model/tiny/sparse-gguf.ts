// A full-size GGUF without its weights: the header llama.cpp's converter + llama-quantize would write for
// a Qwen3 / Qwen3 MoE / Qwen3.5 model of real dimensions (every tensor's name, shape and the type the
// file type's mix picks, in llama-quantize's order, the vocabulary and template in the metadata), and the
// size of the whole file. Written as the header followed by a hole (a sparse file), it reads as the real
// file does to everything that reads headers only: the weight plan, the deal, `npm run plan`.
import { encodeGgufHeader, type GgufTensorHeaderEntry } from '../formats/gguf/gguf-write.ts';
import { GGUF_NAMES as N } from '../formats/gguf/gguf-names.ts';
import { GGUF_HYBRID as X } from '../formats/qwen35-names.ts';
import type { GgmlType } from '../types.ts';
import { ggufTensorType, quantizeOrder, type GgufFileType } from './gguf-mix.ts';
import { hybridLayerTypes } from './tiny-hybrid.ts';
import { ggufMetadata, type GgufVocab } from './tiny-gguf.ts';
import { resolveTinyOptions, type ResolvedTinyOptions, type TinyModelOptions } from './tiny-model.ts';

export interface SparseGguf {
  /** The header: magic, metadata, tensor infos, padding up to the data section. */
  header: Uint8Array;
  /** The whole file's size: header + every tensor's bytes (padded to the alignment). */
  size: number;
  tensors: GgufTensorHeaderEntry[];
}

/** Name, shape (GGUF ne) and the unquantized type of every tensor of a model of these dimensions. */
function tensorShapes(o: ResolvedTinyOptions): { name: string; ne: number[]; base: GgmlType }[] {
  const out: { name: string; ne: number[]; base: GgmlType }[] = [];
  const w = (name: string, ne: number[]) => out.push({ name, ne, base: 'BF16' });
  const f = (name: string, ne: number[]) => out.push({ name, ne, base: 'F32' });
  const { hidden: H, heads: Hq, kvHeads: Hkv, headDim: D, intermediate: I, vocab: V } = o;
  const h = o.hybrid, m = o.moe;
  const types = h ? hybridLayerTypes(o) : [];
  w(N.embedding, [H, V]);
  f(N.finalNorm, [H]);
  if (!o.tieWordEmbeddings) w(N.lmHead, [H, V]);
  for (let i = 0; i < o.layers; i++) {
    f(N.attnNorm(i), [H]);
    f(h ? X.postNorm(i) : N.ffnNorm(i), [H]);
    if (!h || types[i] === 'full_attention') {
      w(N.q(i), [H, (h ? 2 : 1) * Hq * D]); w(N.k(i), [H, Hkv * D]); w(N.v(i), [H, Hkv * D]); w(N.o(i), [Hq * D, H]);
      f(N.qNorm(i), [D]); f(N.kNorm(i), [D]);
    } else {
      const d = h.linearHeadDim, Kd = h.linearKeyHeads * d, Vd = h.linearValueHeads * d, C = 2 * Kd + Vd;
      w(X.attnQkv(i), [H, C]); w(X.attnGate(i), [H, Vd]); w(X.ssmBeta(i), [H, h.linearValueHeads]); w(X.ssmAlpha(i), [H, h.linearValueHeads]);
      f(X.ssmConv(i), [h.convKernel, C]); f(X.ssmA(i), [h.linearValueHeads]); f(X.ssmDt(i), [h.linearValueHeads]); f(X.ssmNorm(i), [d]);
      w(X.ssmOut(i), [Vd, H]);
    }
    if (m) {
      f(N.router(i), [H, m.experts]);
      w(N.gateExps(i), [H, m.intermediate, m.experts]); w(N.upExps(i), [H, m.intermediate, m.experts]); w(N.downExps(i), [m.intermediate, H, m.experts]);
      if (h) {
        const Is = h.sharedExpertIntermediate;
        w(X.sharedGate(i), [H, Is]); w(X.sharedUp(i), [H, Is]); w(X.sharedDown(i), [Is, H]); f(X.sharedRouter(i), [H]);
      }
    } else {
      w(N.gate(i), [H, I]); w(N.up(i), [H, I]); w(N.down(i), [I, H]);
    }
  }
  return out;
}

/**
 * The header and size of a `fileType` GGUF of a model with these dimensions (tiny-model options at full
 * size; a hybrid's MTP block is left out), with `vocab` in its metadata.
 */
export function sparseGguf(opts: TinyModelOptions, fileType: GgufFileType, vocab: GgufVocab, name: string): SparseGguf {
  const o = resolveTinyOptions({ ...opts, ...(opts.hybrid ? { hybrid: { ...opts.hybrid, extras: false } } : {}) });
  const mix = { fileType, numLayers: o.layers, numExperts: o.moe?.experts ?? 0, tiedEmbeddings: o.tieWordEmbeddings };
  const tensors = tensorShapes(o).sort((a, b) => quantizeOrder(a.name, b.name))
    .map((t) => ({ name: t.name, ne: t.ne, type: ggufTensorType(t.name, t.ne, t.base, mix) }));
  const { header, dataBytes } = encodeGgufHeader(ggufMetadata(o, fileType, vocab, name), tensors);
  return { header, size: header.byteLength + dataBytes, tensors };
}
