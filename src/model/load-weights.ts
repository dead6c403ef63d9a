// Load the tensors one device needs (a layer range, maybe the embedding and the head) from any
// ModelSource, in any format (safetensors, MLC q4f16_1, GGUF), as canonical layer weights. Reads are
// ranged: only the requested tensors' bytes plus headers/index (MLC: the shards holding them, whole, so
// size and md5 are checked). Every shape is checked against the config before any data is read.
// Complete or throws. GGUF's preparation lives in formats/gguf/gguf-load.ts, the reading in load-plan.ts.

import { readModelConfig, type ConfigFileName } from './config.ts';
import { ShapeMismatchError, TruncatedFileError, UnknownFormatError, UnsupportedArchitectureError, UnsupportedDTypeError } from './errors.ts';
import { prepareHybridSafetensors } from './formats/hybrid-safetensors.ts';
import type { TensorCatalogue, TensorEntry } from './formats/catalogue.ts';
import { prepareGguf } from './formats/gguf/gguf-load.ts';
import { findMlcCacheFile, openMlc } from './formats/mlc.ts';
import { HF, MLC, layerShapes, type LinearSpec } from './formats/qwen3-names.ts';
import { openSafetensors, SAFETENSORS_FILE, SAFETENSORS_INDEX } from './formats/safetensors.ts';
import { checkRequest, executeLoad, makePlan, readTensors, startProgress, type LoadOptions, type Located, type PreparedLoad, type WeightPlan } from './load-plan.ts';
import { materializeWeights, pendingWeights } from './load-stream.ts';
import { concatRows } from './tensor-utils.ts';
import {
  isMoeLayer, type AttentionWeights, type DecoderLayerWeights, type FfnWeights, type Linear, type ModelConfig, type ModelSource, type ModelWeights, type StoredDType,
  type TensorData, type WeightRequest,
} from './types.ts';

export type { LoadOptions, PlannedRead, WeightPlan } from './load-plan.ts';

// ---- what a request needs (safetensors and MLC) ----------------------------------------------------

type LinearNeed =
  | { kind: 'dense'; label: string; names: string[]; parts: LinearSpec[] }    // row blocks stacked in order
  | { kind: 'q4'; prefix: string; spec: LinearSpec };
interface NormNeed { name: string; size: number }
type MlpNeed =
  | { kind: 'dense'; gateUp: LinearNeed; down: LinearNeed }
  | { kind: 'moe'; router: LinearNeed; gate: LinearNeed; up: LinearNeed; down: LinearNeed };
interface LayerNeed {
  index: number; inputNorm: NormNeed; qkv: LinearNeed; qNorm: NormNeed; kNorm: NormNeed;
  o: LinearNeed; postNorm: NormNeed; mlp: MlpNeed;
}
interface Needs { layers: LayerNeed[]; embedding?: LinearNeed; finalNorm?: NormNeed; lmHead?: LinearNeed }
interface Expect { shape: number[]; dtypes: readonly StoredDType[]; layer?: number }

const FLOATS: readonly StoredDType[] = ['BF16', 'F16', 'F32'];

function needsFor(format: 'safetensors' | 'mlc', c: ModelConfig, req: WeightRequest): Needs {
  const s = layerShapes(c);
  const H = c.hiddenSize;
  const vocab = { rows: c.vocabSize, cols: H };
  const dense = (label: string, names: string[], parts: LinearSpec[]): LinearNeed => ({ kind: 'dense', label, names, parts });
  const q4 = (prefix: string, spec: LinearSpec): LinearNeed => ({ kind: 'q4', prefix, spec });
  const hf = format === 'safetensors';
  const layers: LayerNeed[] = [];
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    let mlp: MlpNeed;
    if (isMoeLayer(c, i)) {
      const m = c.moe!;
      const E = m.numExperts, Ie = m.moeIntermediateSize;
      const experts = (p: 'gate' | 'up' | 'down') => Array.from({ length: E }, (_, e) => HF.expert(i, e, p));
      const expertSpec = (p: 'gate' | 'up' | 'down'): LinearSpec[] => Array(E).fill(p === 'down' ? { rows: H, cols: Ie } : { rows: Ie, cols: H });
      mlp = {
        kind: 'moe',
        router: dense(HF.router(i), [HF.router(i)], [{ rows: E, cols: H }]),
        gate: dense(`model.layers.${i}.mlp.experts.*.gate_proj.weight`, experts('gate'), expertSpec('gate')),
        up: dense(`model.layers.${i}.mlp.experts.*.up_proj.weight`, experts('up'), expertSpec('up')),
        down: dense(`model.layers.${i}.mlp.experts.*.down_proj.weight`, experts('down'), expertSpec('down')),
      };
    } else {
      mlp = {
        kind: 'dense',
        gateUp: hf ? dense(`model.layers.${i}.mlp.{gate,up}_proj.weight`, [HF.mlp(i, 'gate'), HF.mlp(i, 'up')], [s.gate, s.up])
          : q4(MLC.gateUp(i), s.gateUp),
        down: hf ? dense(HF.mlp(i, 'down'), [HF.mlp(i, 'down')], [s.down]) : q4(MLC.down(i), s.down),
      };
    }
    layers.push({
      index: i,
      inputNorm: { name: HF.inputNorm(i), size: H },
      postNorm: { name: HF.postNorm(i), size: H },
      qNorm: { name: HF.qNorm(i), size: c.headDim },
      kNorm: { name: HF.kNorm(i), size: c.headDim },
      qkv: hf ? dense(`model.layers.${i}.self_attn.{q,k,v}_proj.weight`, [HF.proj(i, 'q'), HF.proj(i, 'k'), HF.proj(i, 'v')], [s.q, s.k, s.v])
        : q4(MLC.qkv(i), s.qkv),
      o: hf ? dense(HF.proj(i, 'o'), [HF.proj(i, 'o')], [s.o]) : q4(MLC.o(i), s.o),
      mlp,
    });
  }
  const needs: Needs = { layers };
  if (req.embedding || (req.head && c.tieWordEmbeddings)) {
    needs.embedding = hf ? dense(HF.embedding, [HF.embedding], [vocab]) : q4(MLC.embedding, vocab);
  }
  if (req.head) {
    needs.finalNorm = { name: HF.finalNorm, size: H };
    if (!c.tieWordEmbeddings) needs.lmHead = hf ? dense(HF.lmHead, [HF.lmHead], [vocab]) : q4(MLC.lmHead, vocab);
  }
  return needs;
}

function mlpLinears(m: MlpNeed): LinearNeed[] {
  return m.kind === 'dense' ? [m.gateUp, m.down] : [m.router, m.gate, m.up, m.down];
}

function expectations(needs: Needs): Map<string, Expect> {
  const out = new Map<string, Expect>();
  const norm = (n: NormNeed, layer?: number) => out.set(n.name, { shape: [n.size], dtypes: FLOATS, ...(layer === undefined ? {} : { layer }) });
  const linear = (l: LinearNeed, layer?: number) => {
    const at = layer === undefined ? {} : { layer };
    if (l.kind === 'dense') l.names.forEach((name, j) => out.set(name, { shape: [l.parts[j]!.rows, l.parts[j]!.cols], dtypes: FLOATS, ...at }));
    else {
      out.set(`${l.prefix}.q_weight`, { shape: [l.spec.rows, l.spec.cols / 8], dtypes: ['U32'], ...at });
      out.set(`${l.prefix}.q_scale`, { shape: [l.spec.rows, l.spec.cols / 32], dtypes: ['F16'], ...at });
    }
  };
  for (const l of needs.layers) {
    [l.inputNorm, l.postNorm, l.qNorm, l.kNorm].forEach((n) => norm(n, l.index));
    [l.qkv, l.o, ...mlpLinears(l.mlp)].forEach((x) => linear(x, l.index));
  }
  if (needs.embedding) linear(needs.embedding);
  if (needs.finalNorm) norm(needs.finalNorm);
  if (needs.lmHead) linear(needs.lmHead);
  return out;
}

// ---- planning --------------------------------------------------------------------------------------

async function detectFormat(source: ModelSource): Promise<'safetensors' | 'mlc' | 'gguf'> {
  if (source.modelFile) return 'gguf';
  // The single file first: the built-in model and small checkpoints have it, so nothing missing is asked for.
  if ((await source.exists(SAFETENSORS_FILE)) || (await source.exists(SAFETENSORS_INDEX))) return 'safetensors';
  if (await findMlcCacheFile(source)) return 'mlc';
  throw new UnknownFormatError(
    `no weights found: expected ${SAFETENSORS_FILE}, ${SAFETENSORS_INDEX}, tensor-cache.json, ndarray-cache.json or a .gguf file`,
    { file: source.label });
}

function checkShapes(entries: Map<string, TensorEntry>, expect: Map<string, Expect>, configFile: ConfigFileName): void {
  for (const [name, want] of expect) {
    const e = entries.get(name)!;
    if (e.shape.length !== want.shape.length || e.shape.some((d, i) => d !== want.shape[i])) {
      throw new ShapeMismatchError(`shape [${e.shape.join(', ')}] but ${configFile} implies [${want.shape.join(', ')}]`,
        { file: e.file, tensor: name });
    }
    if (!want.dtypes.includes(e.dtype)) {
      throw new UnsupportedDTypeError(`dtype ${e.dtype} where ${want.dtypes.join(' or ')} is expected`, { file: e.file, tensor: name });
    }
  }
}

async function prepare(source: ModelSource, req: WeightRequest, opts: LoadOptions): Promise<PreparedLoad> {
  const { config, file: configFile, bytes: configBytes } = await readModelConfig(source);
  checkRequest(config, req, configFile);
  const format = await detectFormat(source);
  if (format === 'gguf') return prepareGguf(source, source.modelFile!, config, req, opts);
  if (config.hybrid) {
    if (format === 'mlc') throw new UnsupportedArchitectureError(`${config.modelType} (MLC: no Qwen3.5 build we read; use safetensors or GGUF)`, { file: configFile });
    return prepareHybridSafetensors(source, config, configFile, configBytes, req, opts);
  }
  const needs = needsFor(format, config, req);
  const expect = expectations(needs);
  const names = [...expect.keys()];
  const catalogue = format === 'safetensors' ? await openSafetensors(source, names) : await openMlc(source, names);
  const entries = new Map(names.map((n) => [n, catalogue.tensors.get(n)!]));
  checkShapes(entries, expect, configFile);
  const located = new Map<string, Located>(names.map((n) => {
    const e = entries.get(n)!;
    const layer = expect.get(n)!.layer;
    return [n, { name: n, file: e.file, start: e.start, end: e.end, ...(layer === undefined ? {} : { layer }) }];
  }));
  const metadataBytes = configBytes + catalogue.metadataReads.reduce((a, m) => a + m.bytes, 0);
  const plan = makePlan(config, format, located, metadataBytes, opts, catalogue.wholeFiles);
  return {
    plan, located,
    ...(catalogue.wholeFiles ? { wholeFiles: catalogue.wholeFiles, indexFile: catalogue.metadataReads[0]!.file } : {}),
    ...(format === 'safetensors' ? { eager: eagerSafetensors(needs, entries) } : {}),
    assemble: (data, streamed) => assemble(config, format, needs, entries, data, streamed),
  };
}

/**
 * Safetensors tensors read before a streamed load's weights are assembled: the norms (the engines convert
 * them to f32) and the parts of a stacked matrix whose dtypes differ (stacked as f32). Every other matrix
 * streams. (MLC streams nothing: its shards are read whole so their md5 can be checked.)
 */
function eagerSafetensors(needs: Needs, entries: Map<string, TensorEntry>): Set<string> {
  const out = new Set<string>();
  const norms = needs.layers.flatMap((l) => [l.inputNorm, l.postNorm, l.qNorm, l.kNorm]);
  if (needs.finalNorm) norms.push(needs.finalNorm);
  for (const n of norms) out.add(n.name);
  const linears = [...needs.layers.flatMap((l) => [l.qkv, l.o, ...mlpLinears(l.mlp)]), needs.embedding, needs.lmHead];
  for (const l of linears) {
    if (l?.kind === 'dense' && new Set(l.names.map((n) => entries.get(n)!.dtype)).size > 1) for (const n of l.names) out.add(n);
  }
  return out;
}

/** The byte ranges a request needs, without reading any weight data. */
export async function planWeights(source: ModelSource, req: WeightRequest, opts: LoadOptions = {}): Promise<WeightPlan> {
  return (await prepare(source, req, opts)).plan;
}

// ---- assembling canonical weights ------------------------------------------------------------------

type Catalogue = Pick<TensorCatalogue, 'tensors'>['tensors'];

const NO_BYTES = new Uint8Array(0);

function assemble(config: ModelConfig, format: 'safetensors' | 'mlc', needs: Needs, entries: Catalogue, data: Map<string, Uint8Array>,
  streamed?: ReadonlySet<string>): ModelWeights {
  const isStreamed = (name: string) => !data.has(name) && Boolean(streamed?.has(name));
  const tensor = (name: string): TensorData => {
    const e = entries.get(name)!;
    if (isStreamed(name)) return { name, dtype: e.dtype, shape: e.shape, bytes: NO_BYTES, stream: { parts: [{ tensor: name, bytes: e.end - e.start }], byteLength: e.end - e.start } };
    return { name, dtype: e.dtype, shape: e.shape, bytes: data.get(name)! };
  };
  /** Row blocks stacked: streamed parts as one stream ref (same dtype: eagerSafetensors read mixed ones). */
  const stacked = (label: string, names: string[], rows: number, cols: number): TensorData => {
    if (!names.every(isStreamed)) return concatRows(label, names.map(tensor), rows, cols);
    const parts = names.map((n) => ({ tensor: n, bytes: entries.get(n)!.end - entries.get(n)!.start }));
    return { name: label, dtype: entries.get(names[0]!)!.dtype, shape: [rows, cols], bytes: NO_BYTES, stream: { parts, byteLength: parts.reduce((a, q) => a + q.bytes, 0) } };
  };
  const linear = (l: LinearNeed): Linear => {
    if (l.kind === 'q4') {
      return { kind: 'q4f16_1', rows: l.spec.rows, cols: l.spec.cols, qweight: tensor(`${l.prefix}.q_weight`), scales: tensor(`${l.prefix}.q_scale`) };
    }
    const rows = l.parts.reduce((a, s) => a + s.rows, 0);
    const cols = l.parts[0]!.cols;
    const weight = l.names.length === 1 ? tensor(l.names[0]!) : stacked(l.label, l.names, rows, cols);
    return { kind: 'dense', rows, cols, weight };
  };
  const layers = new Map<number, DecoderLayerWeights>();
  for (const l of needs.layers) {
    const mixer: AttentionWeights = { kind: 'attention', qkv: linear(l.qkv), qNorm: tensor(l.qNorm.name), kNorm: tensor(l.kNorm.name), o: linear(l.o) };
    const m = l.mlp;
    const moe = config.moe;
    const ffn: FfnWeights = m.kind === 'dense' ? { kind: 'dense', gateUp: linear(m.gateUp), down: linear(m.down) } : {
      kind: 'moe',
      moe: {
        numExperts: moe!.numExperts, topK: moe!.numExpertsPerTok, normTopkProb: moe!.normTopkProb, intermediate: moe!.moeIntermediateSize,
        router: linear(m.router), gate: linear(m.gate), up: linear(m.up), down: linear(m.down),
      },
    };
    layers.set(l.index, { index: l.index, inputNorm: tensor(l.inputNorm.name), postNorm: tensor(l.postNorm.name), mixer, ffn });
  }
  const out: ModelWeights = { config, format, layers };
  if (needs.embedding) out.embedding = linear(needs.embedding);
  if (needs.finalNorm) out.finalNorm = tensor(needs.finalNorm.name);
  if (needs.lmHead) out.lmHead = linear(needs.lmHead);
  return out;
}

/**
 * Open what `request` asks for as a streamed load: the small tensors are read now, every matrix carries a
 * `stream` ref and `weights.pending` delivers their bytes once, in bounded pieces (load-stream.ts), for
 * the WebGPU engine to write into its buffers as they pass. GGUF and safetensors stream; MLC (whose shards
 * are read whole to check their md5) and the hybrid safetensors layout are read whole, as loadWeights does. Bad headers, shapes and requests throw here, before any
 * weight data is read; a truncated file throws when its bytes are streamed.
 */
export async function openWeights(source: ModelSource, request: WeightRequest, opts: LoadOptions = {}): Promise<ModelWeights> {
  request.signal?.throwIfAborted();
  const p = await prepare(source, request, opts);
  if (!p.eager) return executeLoad(source, p, request, opts);
  const eager = p.eager;
  const streamed = new Set([...p.located.keys()].filter((n) => !eager.has(n)));
  const progress = startProgress(p, request);
  const data = await readTensors(source, p, request, opts, progress, eager).catch(async (e: unknown) => { throw await firstCut(source, p, e); });
  const weights = p.assemble(data, streamed);
  weights.pending = pendingWeights(source, p, streamed, request, progress);
  return weights;
}

/**
 * A file cut short, found while reading the small tensors first: the error names the first tensor of the
 * whole request the file ends inside (or before), as a whole read in file order would. The file's length
 * comes from the source where it can tell (a read past the end reports only where that read stopped).
 */
async function firstCut(source: ModelSource, p: PreparedLoad, e: unknown): Promise<unknown> {
  if (!(e instanceof TruncatedFileError) || !e.file) return e;
  const size = await source.size?.(e.file).catch(() => undefined);
  if (size === undefined) return e;
  const cut = [...p.located.values()].filter((t) => t.file === e.file && t.end > size).sort((a, b) => a.start - b.start)[0];
  if (!cut || cut.name === e.tensor) return e;
  return new TruncatedFileError(`the file ends inside this tensor's bytes [${cut.start}, ${cut.end})`, { file: cut.file, tensor: cut.name, fileSize: size, cause: e });
}

/**
 * Load what `request` asks for, every byte in JS. Progress is reported after each read; `request.signal`
 * aborts between reads. Any failure (bad header, shape, size, md5, HTTP) throws; nothing half-loaded is
 * returned. Streamed formats are filled tensor by tensor (materializeWeights): the peak is the weights
 * plus LOAD_IN_FLIGHT_BYTES, never the weights twice.
 */
export async function loadWeights(source: ModelSource, request: WeightRequest, opts: LoadOptions = {}): Promise<ModelWeights> {
  return materializeWeights(await openWeights(source, request, opts));
}
