// The model picker's catalogue: Qwen3 presets by Hugging Face id (GGUF Q4_K_M for the models worth
// pooling, MLC q4f16_1 and BF16 safetensors), the Qwen3.5 / Qwen3.6 hybrids (GGUF Q4_K_M: the 27B and the
// 35B-A3B for a room, 2B–9B for one device), and the built-in tiny model that `npm start` serves under
// /models/tiny (random weights).

import { DEFAULT_CONTEXT, SMALL_MODEL_PARAMETERS } from '../agent/limits.ts';
import { parseHfGgufSpec } from '../model/sources/gguf-files.ts';

export interface ModelPreset {
  id: string;                  // what ?model= and the picker use
  label: string;
  size: string;                // download size, roughly
  note?: string;
  /** For "how many devices": the file's bytes and its KV cache bytes per token (all layers, f16). */
  bytes?: number;
  kvBytesPerToken?: number;
  /** Hybrids (Qwen3.5): one copy of every Gated DeltaNet layer's recurrent state; kept live and per checkpoint. */
  stateBytes?: number;
  /** Parameters (all experts counted) and whether it is an MoE: the context a room opens with (defaultContextFor's rule). */
  parameters?: number;
  moe?: boolean;
}

/**
 * The context a room opens with for this preset when none is given: the rule of src/agent/budget.ts
 * defaultContextFor (8,192 up to 4B parameters, 16,384 for bigger dense models, 32,768 for MoE), from
 * the preset's parameter count (the config is not read before the room opens). 0 without a count.
 */
export function presetContext(p: ModelPreset): number {
  if (p.moe) return DEFAULT_CONTEXT.moe;
  if (!p.parameters) return 0;
  return p.parameters <= SMALL_MODEL_PARAMETERS ? DEFAULT_CONTEXT.small : DEFAULT_CONTEXT.dense;
}

const GB = 1e9;
/** KV bytes per token of a Qwen3 shape: layers × 2 (K, V) × KV heads × head dim × 2 bytes (f16). */
const kv = (layers: number, kvHeads: number, headDim = 128) => layers * 2 * kvHeads * headDim * 2;

/** Presets big enough to need a room: Q4_K_M GGUFs from Hugging Face (repo:QUANT picks the file). */
export const GGUF_PRESETS: readonly ModelPreset[] = [
  { id: 'Qwen/Qwen3-8B-GGUF:Q4_K_M', label: 'Qwen3 8B · Q4_K_M (GGUF)', size: '5.0 GB', bytes: 5.03 * GB, kvBytesPerToken: kv(36, 8), parameters: 8.2e9 },
  { id: 'Qwen/Qwen3-14B-GGUF:Q4_K_M', label: 'Qwen3 14B · Q4_K_M (GGUF)', size: '9.0 GB', bytes: 9.0 * GB, kvBytesPerToken: kv(40, 8), parameters: 14.8e9 },
  {
    id: 'Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M', label: 'Qwen3 30B-A3B · Q4_K_M (GGUF, MoE)', size: '18.6 GB', bytes: 18.6 * GB,
    kvBytesPerToken: kv(48, 4), note: '128 experts, 8 active: only ≈3B parameters work per token.', parameters: 30.5e9, moe: true },
  {
    id: 'unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M', label: 'Qwen3 Coder 30B-A3B · Q4_K_M (GGUF, MoE)', size: '18.6 GB',
    bytes: 18.6 * GB, kvBytesPerToken: kv(48, 4), note: 'Trained for coding agents; calls tools in the XML format.', parameters: 30.5e9, moe: true },
];

/**
 * Qwen3.5 hybrid presets (Gated DeltaNet with full attention every 4th layer, so the KV cache is a quarter
 * of a Qwen3's and each checkpoint adds a copy of the recurrent state). KV: full-attention layers × 2 ×
 * KV heads × 256 × 2 bytes; state: linear layers × (conv 3·C + n_v·128·128) × 4 bytes. Sizes are rough.
 */
const state = (linearLayers: number, keyHeads: number, valueHeads: number) => linearLayers * (3 * 128 * (2 * keyHeads + valueHeads) + valueHeads * 128 * 128) * 4;
export const HYBRID_PRESETS: readonly ModelPreset[] = [
  {
    id: 'unsloth/Qwen3.5-27B-GGUF:Q4_K_M', label: 'Qwen3.5 27B · Q4_K_M (GGUF, hybrid)', size: '≈16.7 GB', bytes: 16.7 * GB,
    kvBytesPerToken: kv(16, 4, 256), stateBytes: state(48, 16, 48), note: 'Gated DeltaNet + attention; calls tools in the XML format.', parameters: 27e9 },
  {
    id: 'ggml-org/Qwen3.6-35B-A3B-GGUF:Q4_K_M', label: 'Qwen3.6 35B-A3B · Q4_K_M (GGUF, hybrid MoE)', size: '≈21.2 GB', bytes: 21.2 * GB,
    kvBytesPerToken: kv(10, 2, 256), stateBytes: state(30, 16, 32), note: '256 experts, 8 and a shared one active: ≈3B parameters work per token.', parameters: 35e9, moe: true },
  { id: 'unsloth/Qwen3.5-9B-GGUF:Q4_K_M', label: 'Qwen3.5 9B · Q4_K_M (GGUF, hybrid)', size: '≈5.7 GB', bytes: 5.7 * GB, kvBytesPerToken: kv(8, 4, 256), stateBytes: state(24, 16, 32), parameters: 9e9 },
  { id: 'unsloth/Qwen3.5-4B-GGUF:Q4_K_M', label: 'Qwen3.5 4B · Q4_K_M (GGUF, hybrid)', size: '≈2.7 GB', bytes: 2.7 * GB, kvBytesPerToken: kv(8, 4, 256), stateBytes: state(24, 16, 32), parameters: 4e9 },
  { id: 'unsloth/Qwen3.5-2B-GGUF:Q4_K_M', label: 'Qwen3.5 2B · Q4_K_M (GGUF, hybrid)', size: '≈1.3 GB', bytes: 1.3 * GB, kvBytesPerToken: kv(6, 2, 256), stateBytes: state(18, 16, 16), parameters: 2e9 },
];

/** Recurrent-state copies a hybrid keeps at the room's default 4 answer checkpoints: live, pinned, 4 answers. */
const STATE_COPIES = 6;

/**
 * Devices with `budgetBytes` each needed to hold a preset with a `ctx`-token KV cache (weights + KV, and
 * a hybrid's recurrent state with its checkpoint snapshots, with 10% for activations and the runtime).
 * 0 when the preset has no size.
 */
export function devicesNeeded(p: ModelPreset, budgetBytes: number, ctx: number): number {
  if (!p.bytes || budgetBytes <= 0) return 0;
  return Math.ceil(((p.bytes + (p.kvBytesPerToken ?? 0) * ctx + (p.stateBytes ?? 0) * STATE_COPIES) * 1.1) / budgetBytes);
}

export const TINY_MODEL_ID = 'tiny';
export const TINY_MODEL_PATH = '/models/tiny';

/**
 * The built-in model has random weights: it writes gibberish until the answer cap, which on a software
 * adapter takes minutes at the usual 8,192 tokens. Its answers stop at this many, and the request ends
 * there with TINY_CAP_NOTE in the timeline.
 */
export const TINY_ANSWER_CAP = 256;
export const TINY_CAP_NOTE = `the built-in tiny test model has random weights, so it only writes gibberish: its answers stop at ` +
  `${TINY_ANSWER_CAP} tokens (other models get 8,192). Host the room with a Qwen3 model to build apps.`;

export const MODEL_PRESETS: readonly ModelPreset[] = [
  { id: TINY_MODEL_ID, label: 'Built-in tiny test model', size: '≈20 MB', note: 'Random weights, for trying the room: a small download that answers gibberish (loading takes seconds on a GPU, longer on a software adapter; the room says how long it took).' },
  ...GGUF_PRESETS,
  ...HYBRID_PRESETS,
  { id: 'mlc-ai/Qwen3-0.6B-q4f16_1-MLC', label: 'Qwen3 0.6B · q4f16_1 (MLC)', size: '≈0.35 GB', bytes: 0.35 * GB, kvBytesPerToken: kv(28, 8), parameters: 0.6e9 },
  { id: 'mlc-ai/Qwen3-1.7B-q4f16_1-MLC', label: 'Qwen3 1.7B · q4f16_1 (MLC)', size: '≈0.97 GB', note: 'The smallest model that runs the agent well.', bytes: 0.97 * GB, kvBytesPerToken: kv(28, 8), parameters: 1.7e9 },
  { id: 'mlc-ai/Qwen3-4B-q4f16_1-MLC', label: 'Qwen3 4B · q4f16_1 (MLC)', size: '≈2.3 GB', bytes: 2.3 * GB, kvBytesPerToken: kv(36, 8), parameters: 4.0e9 },
  { id: 'mlc-ai/Qwen3-8B-q4f16_1-MLC', label: 'Qwen3 8B · q4f16_1 (MLC)', size: '≈4.6 GB', bytes: 4.6 * GB, kvBytesPerToken: kv(36, 8), parameters: 8.2e9 },
  { id: 'Qwen/Qwen3-0.6B', label: 'Qwen3 0.6B · BF16', size: '≈1.2 GB', bytes: 1.2 * GB, kvBytesPerToken: kv(28, 8), parameters: 0.6e9 },
  { id: 'Qwen/Qwen3-1.7B', label: 'Qwen3 1.7B · BF16', size: '≈3.4 GB', bytes: 3.4 * GB, kvBytesPerToken: kv(28, 8), parameters: 1.7e9 },
  { id: 'Qwen/Qwen3-4B', label: 'Qwen3 4B · BF16', size: '≈8 GB', bytes: 8.0 * GB, kvBytesPerToken: kv(36, 8), parameters: 4.0e9 },
  { id: 'Qwen/Qwen3-8B', label: 'Qwen3 8B · BF16', size: '≈16 GB', bytes: 16 * GB, kvBytesPerToken: kv(36, 8), parameters: 8.2e9 },
];

export class ModelChoiceError extends Error {
  override name = 'ModelChoiceError';
  readonly code = 'model-choice';
}

const HF_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+(@[\w./-]+)?$/;

/**
 * What the room loads for a picker choice or ?model=: the tiny model's URL on this server, an http(s)
 * URL as is, or a Hugging Face id as its resolve URL (so guests can read the same bytes by Range).
 */
export function modelUrlFor(choice: string, origin: string, hfEndpoint = 'https://huggingface.co'): string {
  const c = choice.trim();
  if (c === '' ) throw new ModelChoiceError('choose a model: a preset, a Hugging Face id, a URL or a folder');
  if (c === TINY_MODEL_ID) return `${origin}${TINY_MODEL_PATH}`;
  if (/^https?:\/\//i.test(c)) return c.replace(/\/+$/, '');
  if (c.startsWith('/')) return `${origin}${c.replace(/\/+$/, '')}`;
  if (parseHfGgufSpec(c)) return c;             // "repo:QUANT": the file is found from the hub's listing (hostModelUrl)
  if (HF_ID.test(c)) {
    const [repo, revision = 'main'] = c.split('@') as [string, string?];
    return `${hfEndpoint}/${repo}/resolve/${encodeURIComponent(revision)}`;
  }
  throw new ModelChoiceError(`"${c}" is not a model: use a Hugging Face id like Qwen/Qwen3-1.7B (or Qwen/Qwen3-8B-GGUF:Q4_K_M), an http(s) URL, or pick a folder`);
}

/**
 * The URL every device of a room reads: a "repo:QUANT" choice becomes its file's resolve URL (the hub
 * listing is asked once, on the host), anything else stays as modelUrlFor made it.
 */
export async function hostModelUrl(url: string, hfEndpoint = 'https://huggingface.co'): Promise<string> {
  const spec = parseHfGgufSpec(url);
  if (!spec) return url;
  const { huggingFaceGgufSource } = await import('../model/sources/resolve.ts');
  const source = await huggingFaceGgufSource(spec.repo, spec.revision, spec.pick, { hfEndpoint });
  return source.urlFor(source.modelFile!);
}

/** A short name for a model choice ("Qwen3-1.7B-q4f16_1-MLC", "tiny test model", "folder qwen3"). */
export function modelName(choice: string): string {
  if (choice === TINY_MODEL_ID) return 'tiny test model';
  const preset = MODEL_PRESETS.find((p) => p.id === choice);
  if (preset) return preset.label;
  const gguf = parseHfGgufSpec(choice);
  if (gguf) return `${gguf.repo.split('/').pop()} ${gguf.pick}`;
  const tail = choice.replace(/\/+$/, '').split('/').pop() ?? choice;
  return tail.replace(/@.*/, '') || choice;
}
