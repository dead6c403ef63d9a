// Planning and assembling a Qwen3.5 / Qwen3.6 safetensors checkpoint (HF names, ./qwen35-names.ts) into
// the canonical hybrid layers of types.ts. Only the language model's tensors are read: model.visual.*
// and mtp.* are never requested. Canonical means llama.cpp's runtime layout (docs/hybrid-models.md), so
// the same engines run both formats; from HF we therefore
//   - add 1 to every zero-centred RMSNorm weight (input/post-attention/final norms, q_norm, k_norm),
//     stored F32 — not to linear_attn.norm, a plain weight;
//   - store A = −exp(A_log) as F32 (GGUF's ssm_a);
//   - read conv1d [C, 1, K] as [C, K];
//   - stack in_proj_qkv | in_proj_z and in_proj_b | in_proj_a, q | k | v, gate | up;
//   - split packed experts (gate_up_proj [E, 2·I_e, H]) into stacked gate and up [E·I_e, H];
//   - keep value heads in HF's grouped order (valueHeads 'grouped').

import { ShapeMismatchError, UnsupportedDTypeError } from '../errors.ts';
import { checkRequest, makePlan, type LoadOptions, type Located, type PreparedLoad } from '../load-plan.ts';
import { concatRows, dtypeSize, fromFloat32, toFloat32 } from '../tensor-utils.ts';
import {
  isLinearLayer, type DecoderLayerWeights, type GatedDeltaNetWeights, type FfnWeights, type MixerWeights, type Linear, type ModelConfig,
  type ModelSource, type ModelWeights, type StoredDType, type TensorData, type WeightRequest,
} from '../types.ts';
import type { TensorEntry } from './catalogue.ts';
import { hf35, type Hf35Names, type HfPrefix } from './qwen35-names.ts';
import { openSafetensors, safetensorsTensorNames } from './safetensors.ts';

const FLOATS: readonly StoredDType[] = ['BF16', 'F16', 'F32'];

interface Expect { shape: number[]; layer?: number }

/** Layout choices read from the file's tensor names: prefix and how experts are stored. */
interface Layout { N: Hf35Names; packedExperts: boolean }

async function detectLayout(source: ModelSource, c: ModelConfig): Promise<Layout> {
  const names = await safetensorsTensorNames(source);
  const prefix: HfPrefix = names.has(hf35('model.language_model.').embedding) || [...names].some((n) => n.startsWith('model.language_model.'))
    ? 'model.language_model.' : 'model.';
  const N = hf35(prefix);
  return { N, packedExperts: c.moe !== undefined && names.has(N.packedGateUp(0)) };
}

/** Every tensor a request needs, with the shape the config implies. */
function expectations(c: ModelConfig, req: WeightRequest, { N, packedExperts }: Layout): Map<string, Expect> {
  const h = c.hybrid!, H = c.hiddenSize, D = c.headDim;
  const Kd = h.linearNumKeyHeads * h.linearKeyHeadDim, Vd = h.linearNumValueHeads * h.linearValueHeadDim, C = 2 * Kd + Vd;
  const nv = h.linearNumValueHeads;
  const out = new Map<string, Expect>();
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    const at = (name: string, ...shape: number[]) => out.set(name, { shape, layer: i });
    at(N.inputNorm(i), H);
    at(N.postNorm(i), H);
    if (isLinearLayer(c, i)) {
      at(N.linear(i, 'in_proj_qkv'), C, H); at(N.linear(i, 'in_proj_z'), Vd, H);
      at(N.linear(i, 'in_proj_b'), nv, H); at(N.linear(i, 'in_proj_a'), nv, H);
      at(N.linear(i, 'conv1d'), C, 1, h.convKernel); at(N.aLog(i), nv); at(N.dtBias(i), nv);
      at(N.linear(i, 'norm'), h.linearValueHeadDim); at(N.linear(i, 'out_proj'), H, Vd);
    } else {
      at(N.attn(i, 'q_proj'), 2 * c.numHeads * D, H); at(N.attn(i, 'k_proj'), c.numKvHeads * D, H);
      at(N.attn(i, 'v_proj'), c.numKvHeads * D, H); at(N.attn(i, 'o_proj'), H, c.numHeads * D);
      at(N.attn(i, 'q_norm'), D); at(N.attn(i, 'k_norm'), D);
    }
    const m = c.moe;
    if (m) {
      const E = m.numExperts, I = m.moeIntermediateSize, Is = m.sharedExpertIntermediateSize!;
      at(N.router(i), E, H);
      if (packedExperts) { at(N.packedGateUp(i), E, 2 * I, H); at(N.packedDown(i), E, H, I); }
      else for (let e = 0; e < E; e++) { at(N.expert(i, e, 'gate'), I, H); at(N.expert(i, e, 'up'), I, H); at(N.expert(i, e, 'down'), H, I); }
      at(N.shared(i, 'gate'), Is, H); at(N.shared(i, 'up'), Is, H); at(N.shared(i, 'down'), H, Is); at(N.sharedGate(i), 1, H);
    } else {
      at(N.mlp(i, 'gate'), c.intermediateSize, H); at(N.mlp(i, 'up'), c.intermediateSize, H); at(N.mlp(i, 'down'), H, c.intermediateSize);
    }
  }
  if (req.embedding || (req.head && c.tieWordEmbeddings)) out.set(N.embedding, { shape: [c.vocabSize, H] });
  if (req.head) {
    out.set(N.finalNorm, { shape: [H] });
    if (!c.tieWordEmbeddings) out.set(N.lmHead, { shape: [c.vocabSize, H] });
  }
  return out;
}

export async function prepareHybridSafetensors(source: ModelSource, config: ModelConfig, configFile: string, configBytes: number,
  req: WeightRequest, opts: LoadOptions): Promise<PreparedLoad> {
  checkRequest(config, req, configFile);
  const layout = await detectLayout(source, config);
  const expect = expectations(config, req, layout);
  const names = [...expect.keys()];
  const catalogue = await openSafetensors(source, names);
  const located = new Map<string, Located>();
  for (const [name, want] of expect) {
    const e = catalogue.tensors.get(name)!;
    if (e.shape.length !== want.shape.length || e.shape.some((d, i) => d !== want.shape[i])) {
      throw new ShapeMismatchError(`shape [${e.shape.join(', ')}] but ${configFile} implies [${want.shape.join(', ')}]`, { file: e.file, tensor: name });
    }
    if (!FLOATS.includes(e.dtype)) throw new UnsupportedDTypeError(`dtype ${e.dtype} where BF16, F16 or F32 is expected`, { file: e.file, tensor: name });
    located.set(name, { name, file: e.file, start: e.start, end: e.end, ...(want.layer === undefined ? {} : { layer: want.layer }) });
  }
  const metadataBytes = configBytes + catalogue.metadataReads.reduce((a, m) => a + m.bytes, 0);
  const plan = makePlan(config, 'safetensors', located, metadataBytes, opts);
  return { plan, located, assemble: (data) => assemble(config, req, layout, catalogue.tensors, data) };
}

// ---- assembling ------------------------------------------------------------------------------------

function assemble(c: ModelConfig, req: WeightRequest, { N, packedExperts }: Layout, entries: Map<string, TensorEntry>, data: Map<string, Uint8Array>): ModelWeights {
  const tensor = (name: string): TensorData => {
    const e = entries.get(name)!;
    return { name, dtype: e.dtype, shape: e.shape, bytes: data.get(name)! };
  };
  const linear = (label: string, ...names: string[]): Linear => {
    const parts = names.map(tensor);
    const rows = parts.reduce((a, t) => a + t.shape[0]!, 0), cols = parts[0]!.shape[parts[0]!.shape.length - 1]!;
    return { kind: 'dense', rows, cols, weight: parts.length === 1 ? { ...parts[0]!, shape: [rows, cols] } : concatRows(label, parts, rows, cols) };
  };
  /** HF's zero-centred RMSNorm weight w as the multiplicative weight 1 + w (f32, as HF computes it). */
  const plusOne = (name: string): TensorData => {
    const t = tensor(name);
    return fromFloat32(`${name} (1 + w)`, toFloat32(t).map((w) => 1 + w), t.shape, 'F32');
  };
  const layers = new Map<number, DecoderLayerWeights>();
  for (let i = req.layers[0]; i < req.layers[1]; i++) {
    const mixer: MixerWeights = isLinearLayer(c, i) ? deltaNet(i) : {
      kind: 'gated_attention',
      qkv: linear(`${N.attn(i, 'q_proj')}+k+v`, N.attn(i, 'q_proj'), N.attn(i, 'k_proj'), N.attn(i, 'v_proj')),
      qNorm: plusOne(N.attn(i, 'q_norm')), kNorm: plusOne(N.attn(i, 'k_norm')), o: linear(N.attn(i, 'o_proj'), N.attn(i, 'o_proj')),
    };
    const m = c.moe;
    const ffn: FfnWeights = !m
      ? { kind: 'dense', gateUp: linear(`${N.mlp(i, 'gate')}+up`, N.mlp(i, 'gate'), N.mlp(i, 'up')), down: linear(N.mlp(i, 'down'), N.mlp(i, 'down')) }
      : {
        kind: 'moe',
        moe: {
          numExperts: m.numExperts, topK: m.numExpertsPerTok, normTopkProb: m.normTopkProb, intermediate: m.moeIntermediateSize,
          router: linear(N.router(i), N.router(i)), ...experts(i),
        },
        shared: {
          intermediate: m.sharedExpertIntermediateSize!,
          gateUp: linear(`${N.shared(i, 'gate')}+up`, N.shared(i, 'gate'), N.shared(i, 'up')),
          down: linear(N.shared(i, 'down'), N.shared(i, 'down')), gate: linear(N.sharedGate(i), N.sharedGate(i)),
        },
      };
    layers.set(i, { index: i, inputNorm: plusOne(N.inputNorm(i)), postNorm: plusOne(N.postNorm(i)), mixer, ffn });
  }
  const out: ModelWeights = { config: c, format: 'safetensors', layers };
  if (entries.has(N.embedding) && data.has(N.embedding)) out.embedding = linear(N.embedding, N.embedding);
  if (data.has(N.finalNorm)) out.finalNorm = plusOne(N.finalNorm);
  if (data.has(N.lmHead)) out.lmHead = linear(N.lmHead, N.lmHead);
  return out;

  function deltaNet(i: number): GatedDeltaNetWeights {
    const conv = tensor(N.linear(i, 'conv1d'));
    const aLog = tensor(N.aLog(i));
    return {
      kind: 'gated_delta_net',
      qkvz: linear(`${N.linear(i, 'in_proj_qkv')}+z`, N.linear(i, 'in_proj_qkv'), N.linear(i, 'in_proj_z')),
      ba: linear(`${N.linear(i, 'in_proj_b')}+a`, N.linear(i, 'in_proj_b'), N.linear(i, 'in_proj_a')),
      conv: { ...conv, shape: [conv.shape[0]!, conv.shape[2]!] },
      a: fromFloat32(`${aLog.name} (−exp)`, toFloat32(aLog).map((x) => -Math.exp(x)), aLog.shape, 'F32'),
      dtBias: tensor(N.dtBias(i)), norm: tensor(N.linear(i, 'norm')),
      out: linear(N.linear(i, 'out_proj'), N.linear(i, 'out_proj')),
      valueHeads: 'grouped',
    };
  }

  /** Routed experts stacked along rows: expert e is rows [e·I_e, (e+1)·I_e) of gate and up, [e·H, (e+1)·H) of down. */
  function experts(i: number): { gate: Linear; up: Linear; down: Linear } {
    const m = c.moe!, E = m.numExperts, I = m.moeIntermediateSize, H = c.hiddenSize;
    if (!packedExperts) {
      const stack = (p: 'gate' | 'up' | 'down') => linear(`model.layers.${i}.mlp.experts.*.${p}_proj.weight`, ...Array.from({ length: E }, (_, e) => N.expert(i, e, p)));
      return { gate: stack('gate'), up: stack('up'), down: stack('down') };
    }
    const gu = tensor(N.packedGateUp(i));
    const row = H * dtypeSize(gu.dtype);                 // bytes of one row
    const gate = new Uint8Array(E * I * row), up = new Uint8Array(E * I * row);
    for (let e = 0; e < E; e++) {
      gate.set(gu.bytes.subarray((2 * e) * I * row, (2 * e + 1) * I * row), e * I * row);
      up.set(gu.bytes.subarray((2 * e + 1) * I * row, (2 * e + 2) * I * row), e * I * row);
    }
    const dense = (name: string, bytes: Uint8Array, rows: number, cols: number, dtype: StoredDType): Linear =>
      ({ kind: 'dense', rows, cols, weight: { name, dtype, shape: [rows, cols], bytes } });
    const down = tensor(N.packedDown(i));
    return {
      gate: dense(`${gu.name} (gate rows)`, gate, E * I, H, gu.dtype), up: dense(`${gu.name} (up rows)`, up, E * I, H, gu.dtype),
      down: dense(down.name, down.bytes, E * H, I, down.dtype),
    };
  }
}
