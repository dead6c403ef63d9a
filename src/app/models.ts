// The model picker's catalogue: Qwen3 presets by Hugging Face id (MLC q4f16_1 and BF16 safetensors),
// and the built-in tiny model that `npm start` serves under /models/tiny (random weights).

export interface ModelPreset {
  id: string;                  // what ?model= and the picker use
  label: string;
  size: string;                // download size, roughly
  note?: string;
}

export const TINY_MODEL_ID = 'tiny';
export const TINY_MODEL_PATH = '/models/tiny';

export const MODEL_PRESETS: readonly ModelPreset[] = [
  { id: TINY_MODEL_ID, label: 'Built-in tiny test model', size: '≈20 MB', note: 'Random weights, for trying the room: it loads in seconds and answers gibberish.' },
  { id: 'mlc-ai/Qwen3-0.6B-q4f16_1-MLC', label: 'Qwen3 0.6B · q4f16_1 (MLC)', size: '≈0.35 GB' },
  { id: 'mlc-ai/Qwen3-1.7B-q4f16_1-MLC', label: 'Qwen3 1.7B · q4f16_1 (MLC)', size: '≈0.97 GB', note: 'The smallest model that runs the agent well.' },
  { id: 'mlc-ai/Qwen3-4B-q4f16_1-MLC', label: 'Qwen3 4B · q4f16_1 (MLC)', size: '≈2.3 GB' },
  { id: 'mlc-ai/Qwen3-8B-q4f16_1-MLC', label: 'Qwen3 8B · q4f16_1 (MLC)', size: '≈4.6 GB' },
  { id: 'Qwen/Qwen3-0.6B', label: 'Qwen3 0.6B · BF16', size: '≈1.2 GB' },
  { id: 'Qwen/Qwen3-1.7B', label: 'Qwen3 1.7B · BF16', size: '≈3.4 GB' },
  { id: 'Qwen/Qwen3-4B', label: 'Qwen3 4B · BF16', size: '≈8 GB' },
  { id: 'Qwen/Qwen3-8B', label: 'Qwen3 8B · BF16', size: '≈16 GB' },
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
  if (HF_ID.test(c)) {
    const [repo, revision = 'main'] = c.split('@') as [string, string?];
    return `${hfEndpoint}/${repo}/resolve/${encodeURIComponent(revision)}`;
  }
  throw new ModelChoiceError(`"${c}" is not a model: use a Hugging Face id like Qwen/Qwen3-1.7B, an http(s) URL, or pick a folder`);
}

/** A short name for a model choice ("Qwen3-1.7B-q4f16_1-MLC", "tiny test model", "folder qwen3"). */
export function modelName(choice: string): string {
  if (choice === TINY_MODEL_ID) return 'tiny test model';
  const preset = MODEL_PRESETS.find((p) => p.id === choice);
  if (preset) return preset.label;
  const tail = choice.replace(/\/+$/, '').split('/').pop() ?? choice;
  return tail.replace(/@.*/, '') || choice;
}
