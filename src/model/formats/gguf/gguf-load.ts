// Planning and assembling a GGUF model's tensors for one device (the reading itself is load-plan.ts).
// Every tensor a request needs is checked before any data is read: present, of a type we read
// (UnsupportedTensorTypeError names it), shaped as the metadata implies (ShapeMismatchError), inside the
// file (checked when the header was read). Matrices keep their bytes as stored: an all-float matrix
// becomes a 'dense' Linear (the engines' existing path), anything with ggml blocks a 'ggml' Linear whose
// segments are the stacked tensors (q | k | v, gate | up), neighbours of one type merged.

import { ShapeMismatchError, TensorMissingError, UnsupportedTensorTypeError } from '../../errors.ts';
import { checkRequest, makePlan, type LoadOptions, type Located, type PreparedLoad } from '../../load-plan.ts';
import { toFloat32 } from '../../tensor-utils.ts';
import {
  isMoeLayer, type AttentionWeights, type DecoderLayerWeights, type FfnWeights, type GgmlSegment, type GgmlType, type Linear, type ModelConfig, type ModelSource,
  type ModelWeights, type StoredDType, type StreamRef, type TensorData, type WeightRequest,
} from '../../types.ts';
import { GGUF_NAMES as N } from './gguf-names.ts';
import { assembleHybridLayers, hybridWanted } from './gguf-hybrid.ts';
import { cachedGgufModel, type GgufModel, type GgufTensorInfo } from './gguf-read.ts';

const FLOAT_TYPES: readonly GgmlType[] = ['F32', 'F16', 'BF16'];

interface Want { ne: number[]; alt?: number[]; layer?: number; norm?: boolean }

/** Tensor names a request needs with the ne the metadata implies. */
function wanted(c: ModelConfig, req: WeightRequest): Map<string, Want> {
  const H = c.hiddenSize, D = c.headDim, q = c.numHeads * D, kv = c.numKvHeads * D, I = c.intermediateSize;
  const out = new Map<string, Want>();
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    const at = (ne: number[], norm = false): Want => ({ ne, layer: i, ...(norm ? { norm } : {}) });
    out.set(N.attnNorm(i), at([H], true)).set(N.ffnNorm(i), at([H], true));
    out.set(N.qNorm(i), at([D], true)).set(N.kNorm(i), at([D], true));
    out.set(N.q(i), at([H, q])).set(N.k(i), at([H, kv])).set(N.v(i), at([H, kv])).set(N.o(i), at([q, H]));
    if (isMoeLayer(c, i)) {
      const { numExperts: E, moeIntermediateSize: Ie } = c.moe!;
      out.set(N.router(i), at([H, E])).set(N.gateExps(i), at([H, Ie, E])).set(N.upExps(i), at([H, Ie, E])).set(N.downExps(i), at([Ie, H, E]));
    } else {
      out.set(N.gate(i), at([H, I])).set(N.up(i), at([H, I])).set(N.down(i), at([I, H]));
    }
  }
  if (req.embedding || (req.head && c.tieWordEmbeddings)) out.set(N.embedding, { ne: [H, c.vocabSize] });
  if (req.head) {
    out.set(N.finalNorm, { ne: [H], norm: true });
    if (!c.tieWordEmbeddings) out.set(N.lmHead, { ne: [H, c.vocabSize] });
  }
  return out;
}

function check(model: GgufModel, name: string, want: Want): GgufTensorInfo {
  const t = model.tensors.get(name);
  if (!t) throw new TensorMissingError('tensor not in the GGUF', { file: model.files[0]!, tensor: name });
  if (!t.type) throw new UnsupportedTensorTypeError(t.typeName, { file: t.file, tensor: name });
  if (want.norm && !FLOAT_TYPES.includes(t.type)) throw new UnsupportedTensorTypeError(`${t.type} (a norm must be F32, F16 or BF16)`, { file: t.file, tensor: name });
  const same = (ne: number[]) => t.ne.length === ne.length && t.ne.every((d, i) => d === ne[i]);
  if (!same(want.ne) && !(want.alt && same(want.alt))) {
    throw new ShapeMismatchError(`ne [${t.ne.join(', ')}] but the GGUF metadata implies [${want.ne.join(', ')}]`, { file: t.file, tensor: name });
  }
  return t;
}

const rowsOf = (t: GgufTensorInfo): number => t.ne.slice(1).reduce((a, d) => a * d, 1);

const NO_BYTES = new Uint8Array(0);

/**
 * Rows of these tensors stacked in order, as a 'dense' Linear when every part is the same float type.
 * Parts without bytes are streamed: the holder gets a `stream` ref to them (in order) and no bytes.
 */
function stack(parts: { info: GgufTensorInfo; bytes: Uint8Array | undefined }[]): Linear {
  const cols = parts[0]!.info.ne[0]!;
  const rows = parts.reduce((a, p) => a + rowsOf(p.info), 0);
  const type = parts[0]!.info.type!;
  const held = (run: typeof parts): { bytes: Uint8Array; stream?: StreamRef } => {
    if (run.every((p) => p.bytes)) return { bytes: concat(run.map((p) => p.bytes!)) };
    const refs = run.map((p) => ({ tensor: p.info.name, bytes: p.info.end - p.info.start }));
    return { bytes: NO_BYTES, stream: { parts: refs, byteLength: refs.reduce((a, r) => a + r.bytes, 0) } };
  };
  const concat = (list: Uint8Array[]) => {
    if (list.length === 1) return list[0]!;
    const out = new Uint8Array(list.reduce((a, b) => a + b.byteLength, 0));
    let o = 0;
    for (const b of list) { out.set(b, o); o += b.byteLength; }
    return out;
  };
  if (FLOAT_TYPES.includes(type) && parts.every((p) => p.info.type === type)) {
    const name = parts.map((p) => p.info.name).join('+');
    return { kind: 'dense', rows, cols, weight: { name, dtype: type as StoredDType, shape: [rows, cols], ...held(parts) } };
  }
  const segments: GgmlSegment[] = [];
  let run: typeof parts = [];
  const flush = () => {
    if (run.length === 0) return;
    segments.push({ name: run.map((p) => p.info.name).join('+'), type: run[0]!.info.type!, rows: run.reduce((a, p) => a + rowsOf(p.info), 0), ...held(run) });
    run = [];
  };
  for (const p of parts) {
    if (run.length > 0 && run[0]!.info.type !== p.info.type) flush();
    run.push(p);
  }
  flush();
  return { kind: 'ggml', rows, cols, segments };
}

/** Plan a GGUF request: which byte ranges of which part, checked against the metadata. */
export async function prepareGguf(source: ModelSource, file: string, config: ModelConfig, req: WeightRequest, opts: LoadOptions): Promise<PreparedLoad> {
  checkRequest(config, req, file);
  const model = await cachedGgufModel(source, file);
  const want = config.hybrid ? withFixedTensors(config, req, hybridWanted(config, req)) : wanted(config, req);
  const infos = new Map<string, GgufTensorInfo>();
  const located = new Map<string, Located>();
  for (const [name, w] of want) {
    const t = check(model, name, w);
    infos.set(name, t);
    located.set(name, { name, file: t.file, start: t.start, end: t.end, ...(w.layer === undefined ? {} : { layer: w.layer }) });
  }
  const metadataBytes = model.headers.reduce((a, h) => a + h.headerBytes, 0);
  const plan = makePlan(config, 'gguf', located, metadataBytes, opts);
  // Small tensors stored in another float type than F32 are converted at assembly, so they are read
  // first; everything else streams (an F32 norm's bytes are what the engines hold), so a share's reads
  // stay the plan's merged reads, in file order.
  const eager = new Set([...want].filter(([name, w]) => w.norm && infos.get(name)!.type !== 'F32').map(([name]) => name));
  return { plan, located, eager, assemble: (data, streamed) => assemble(config, req, infos, data, streamed) };
}

/** The embedding, final norm and head a request needs, beside a hybrid request's layer tensors. */
function withFixedTensors(c: ModelConfig, req: WeightRequest, layers: Map<string, Want>): Map<string, Want> {
  for (const [name, w] of wanted(c, { ...req, layers: [0, 0] })) layers.set(name, w);
  return layers;
}

function assemble(c: ModelConfig, req: WeightRequest, infos: Map<string, GgufTensorInfo>, data: Map<string, Uint8Array>, streamed?: ReadonlySet<string>): ModelWeights {
  const part = (name: string) => {
    const bytes = data.get(name);
    if (!bytes && !streamed?.has(name)) throw new Error(`GGUF assemble: tensor "${name}" was neither read nor streamed`);
    return { info: infos.get(name)!, bytes };
  };
  const linear = (...names: string[]) => stack(names.map(part));
  /** A small float tensor (norm, ssm_a, conv taps) as F32, shape = ne reversed (HF order). */
  const norm = (name: string): TensorData => {
    const { info, bytes: b } = part(name);
    const shape = [...info.ne].reverse();
    if (!b) {
      if (info.type !== 'F32') throw new Error(`GGUF assemble: "${name}" is converted at load, so it cannot be streamed`);
      const stream: StreamRef = { parts: [{ tensor: name, bytes: info.end - info.start }], byteLength: info.end - info.start };
      return { name, dtype: 'F32', shape, bytes: NO_BYTES, stream };
    }
    const bytes = b;
    const t: TensorData = { name, dtype: info.type as StoredDType, shape: [...info.ne].reverse(), bytes };
    return t.dtype === 'F32' ? t : { ...t, dtype: 'F32', bytes: new Uint8Array(toFloat32(t).buffer) };
  };
  const layers = c.hybrid ? assembleHybridLayers(c, req, { tensor: norm, linear }) : new Map<number, DecoderLayerWeights>();
  for (let i = req.layers[0]; i < req.layers[1] && !c.hybrid; i++) {
    const mixer: AttentionWeights = { kind: 'attention', qkv: linear(N.q(i), N.k(i), N.v(i)), qNorm: norm(N.qNorm(i)), kNorm: norm(N.kNorm(i)), o: linear(N.o(i)) };
    const m = c.moe;
    const ffn: FfnWeights = !isMoeLayer(c, i) ? { kind: 'dense', gateUp: linear(N.gate(i), N.up(i)), down: linear(N.down(i)) } : {
      kind: 'moe',
      moe: {
        numExperts: m!.numExperts, topK: m!.numExpertsPerTok, normTopkProb: m!.normTopkProb, intermediate: m!.moeIntermediateSize,
        router: linear(N.router(i)), gate: linear(N.gateExps(i)), up: linear(N.upExps(i)), down: linear(N.downExps(i)),
      },
    };
    layers.set(i, { index: i, inputNorm: norm(N.attnNorm(i)), postNorm: norm(N.ffnNorm(i)), mixer, ffn });
  }
  const out: ModelWeights = { config: c, format: 'gguf', layers };
  if (infos.has(N.embedding)) out.embedding = linear(N.embedding);
  if (infos.has(N.finalNorm)) out.finalNorm = norm(N.finalNorm);
  if (infos.has(N.lmHead)) out.lmHead = linear(N.lmHead);
  return out;
}
