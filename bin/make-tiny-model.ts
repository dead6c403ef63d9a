// npm run make-tiny-model -- --out DIR [--layers N] [--hidden H] [--heads A] [--kv-heads K]
//   [--head-dim D] [--intermediate I] [--vocab tokenizer|N] [--seed S] [--format safetensors|mlc|both|gguf]
//   [--quant Q4_K_M|Q8_0|...] [--shards N] [--untied] [--experts E --top-k K --moe-intermediate I]
//   [--hybrid [--linear-key-heads 2 --linear-value-heads 4 --linear-head-dim 64 --conv-kernel 4
//    --full-attention-interval 4 --partial-rotary 0.25 --shared-expert-intermediate I --no-extras]]
// Writes a Qwen3 (or, with --hybrid, a Qwen3.5) checkpoint with seeded random weights in the layout of a
// real repository.

import { parseArgs } from 'node:util';
import { GGUF_FILE_TYPES, type GgufFileType } from '../src/model/tiny/gguf-mix.ts';
import type { TinyGgufOptions } from '../src/model/tiny/tiny-gguf.ts';
import { QWEN3_VOCAB, type TinyModelOptions } from '../src/model/tiny/tiny-model.ts';
import { writeTinyModel, type TinyFormatChoice, type TinyVocabChoice } from '../src/model/tiny/write-node.ts';

const USAGE = `usage: npm run make-tiny-model -- --out DIR [options]
  --layers N          decoder layers (default 4)
  --hidden H          hidden size (default 64)
  --heads A           query heads (default 4)
  --kv-heads K        key/value heads (default 2)
  --head-dim D        head dimension (default 16)
  --intermediate I    MLP size (default 128)
  --vocab tokenizer|N embedding rows; "tokenizer" = ${QWEN3_VOCAB}, Qwen3's (default)
  --seed S            random seed (default 0); the same seed gives the same bytes
  --format F          safetensors | mlc | both | gguf (default safetensors; both → DIR/safetensors and DIR/mlc)
  --quant Q           GGUF file type: ${GGUF_FILE_TYPES.join(' | ')} (default Q8_0; Q4_K_M is llama.cpp's mix)
  --tokenizer T       GGUF vocabulary: qwen3 (the full Qwen3 vocabulary, default) | tiny-bpe (a small non-Qwen BPE)
  --shards N          exactly N weight files, tensors split in order (safetensors adds model.safetensors.index.json;
                      gguf writes <name>-0000k-of-0000N.gguf parts)
  --untied            write a separate lm_head instead of tying it to the embedding
  --experts E         a Qwen3 MoE model with E experts per layer (safetensors or gguf)
  --top-k K           experts per token (default 2)
  --moe-intermediate I  expert MLP size (default 256)
  --no-norm-topk      do not renormalise the top-k routing weights (HF norm_topk_prob false)
  --mlp-only-layers L comma-separated layers with a dense MLP instead (HF mlp_only_layers)
  --hybrid            a Qwen3.5 hybrid (Gated DeltaNet + gated attention; with --experts, Qwen3.5 MoE with a
                      shared expert), safetensors or gguf; its chat template is Qwen3.5's (XML tool calls)
  --linear-key-heads K    Gated DeltaNet key heads n_k (default 2)
  --linear-value-heads V  value heads n_v, a multiple of n_k and not equal to it in tests (default 4)
  --linear-head-dim D     d_k = d_v (default 64)
  --conv-kernel K         causal conv taps (default 4)
  --full-attention-interval N  every Nth layer is full attention (default 4)
  --partial-rotary F      RoPE on head-dim · F dims (default 0.25)
  --shared-expert-intermediate I  the MoE's shared expert size (default: the experts')
  --no-extras         leave out the vision tensor and MTP block a released checkpoint has (default: write them)`;

function fail(message: string): never {
  process.stderr.write(`make-tiny-model: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) fail(`--${name} needs a non-negative integer, got "${v}"`);
  return Number(v);
}

async function main(): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: 'string' }, layers: { type: 'string' }, hidden: { type: 'string' }, heads: { type: 'string' },
        'kv-heads': { type: 'string' }, 'head-dim': { type: 'string' }, intermediate: { type: 'string' },
        vocab: { type: 'string' }, seed: { type: 'string' }, format: { type: 'string' }, shards: { type: 'string' },
        untied: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, quant: { type: 'string' }, tokenizer: { type: 'string' },
        experts: { type: 'string' }, 'top-k': { type: 'string' }, 'moe-intermediate': { type: 'string' },
        'no-norm-topk': { type: 'boolean' }, 'mlp-only-layers': { type: 'string' },
        hybrid: { type: 'boolean' }, 'linear-key-heads': { type: 'string' }, 'linear-value-heads': { type: 'string' },
        'linear-head-dim': { type: 'string' }, 'conv-kernel': { type: 'string' }, 'full-attention-interval': { type: 'string' },
        'partial-rotary': { type: 'string' }, 'shared-expert-intermediate': { type: 'string' }, 'no-extras': { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (e) {
    fail((e as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const out = values.out as string | undefined;
  if (!out) fail('--out DIR is required');
  const format = (values.format ?? 'safetensors') as TinyFormatChoice;
  if (!['safetensors', 'mlc', 'both', 'gguf'].includes(format)) fail(`--format must be safetensors, mlc, both or gguf, got "${format}"`);
  const quant = (values.quant ?? 'Q8_0') as GgufFileType;
  if (!(GGUF_FILE_TYPES as readonly string[]).includes(quant)) fail(`--quant must be one of ${GGUF_FILE_TYPES.join(', ')}, got "${quant}"`);
  if (values.quant !== undefined && format !== 'gguf') fail('--quant needs --format gguf');
  const vocabChoice = (values.tokenizer ?? 'qwen3') as TinyVocabChoice;
  if (!['qwen3', 'tiny-bpe'].includes(vocabChoice)) fail(`--tokenizer must be qwen3 or tiny-bpe, got "${vocabChoice}"`);
  const vocabArg = values.vocab as string | undefined;
  const opts: TinyModelOptions & TinyGgufOptions = {};
  const set = <K extends keyof TinyModelOptions>(k: K, v: TinyModelOptions[K] | undefined) => { if (v !== undefined) opts[k] = v; };
  set('layers', int('layers', values.layers as string | undefined));
  set('hidden', int('hidden', values.hidden as string | undefined));
  set('heads', int('heads', values.heads as string | undefined));
  set('kvHeads', int('kv-heads', values['kv-heads'] as string | undefined));
  set('headDim', int('head-dim', values['head-dim'] as string | undefined));
  set('intermediate', int('intermediate', values.intermediate as string | undefined));
  if (format !== 'gguf') set('vocab', vocabArg === undefined || vocabArg === 'tokenizer' ? QWEN3_VOCAB : int('vocab', vocabArg));
  else if (vocabArg !== undefined && vocabArg !== 'tokenizer') fail('--vocab is the tokenizer\'s size for --format gguf (choose the vocabulary with --tokenizer)');
  if (format === 'gguf') opts.fileType = quant;
  const experts = int('experts', values.experts as string | undefined);
  if (experts !== undefined) {
    const layersArg = values['mlp-only-layers'] as string | undefined;
    opts.moe = {
      experts,
      ...(values['top-k'] !== undefined ? { topK: int('top-k', values['top-k'] as string)! } : {}),
      ...(values['moe-intermediate'] !== undefined ? { intermediate: int('moe-intermediate', values['moe-intermediate'] as string)! } : {}),
      ...(values['no-norm-topk'] ? { normTopkProb: false } : {}),
      ...(layersArg ? { mlpOnlyLayers: layersArg.split(',').map((x) => int('mlp-only-layers', x.trim())!) } : {}),
    };
  }
  const hybridFlags = ['linear-key-heads', 'linear-value-heads', 'linear-head-dim', 'conv-kernel', 'full-attention-interval', 'partial-rotary', 'shared-expert-intermediate', 'no-extras'];
  if (!values.hybrid && hybridFlags.some((f) => values[f] !== undefined)) fail(`--${hybridFlags.find((f) => values[f] !== undefined)} needs --hybrid`);
  if (values.hybrid) {
    if (format === 'mlc' || format === 'both') fail('--hybrid needs --format safetensors or gguf (MLC has no Qwen3.5 layout)');
    const rotary = values['partial-rotary'] as string | undefined;
    if (rotary !== undefined && !(Number(rotary) > 0 && Number(rotary) <= 1)) fail(`--partial-rotary needs a number in (0, 1], got "${rotary}"`);
    const h: NonNullable<TinyModelOptions['hybrid']> = {};
    const put = (k: keyof typeof h, flag: string) => { const v = int(flag, values[flag] as string | undefined); if (v !== undefined) (h as Record<string, number>)[k] = v; };
    put('linearKeyHeads', 'linear-key-heads'); put('linearValueHeads', 'linear-value-heads'); put('linearHeadDim', 'linear-head-dim');
    put('convKernel', 'conv-kernel'); put('fullAttentionInterval', 'full-attention-interval'); put('sharedExpertIntermediate', 'shared-expert-intermediate');
    if (rotary !== undefined) h.partialRotaryFactor = Number(rotary);
    if (values['no-extras']) h.extras = false;
    opts.hybrid = h;
  }
  set('seed', int('seed', values.seed as string | undefined));
  if (format === 'gguf') { const n = int('shards', values.shards as string | undefined); if (n !== undefined) opts.splits = n; }
  else set('shards', int('shards', values.shards as string | undefined));
  if (values.untied) opts.tieWordEmbeddings = false;
  const started = performance.now();
  let written: Record<string, string[]>;
  try {
    written = await writeTinyModel(out, opts, format, vocabChoice);
  } catch (e) {
    if (e instanceof RangeError) fail(e.message);
    throw e;
  }
  for (const [sub, files] of Object.entries(written)) {
    process.stdout.write(`${sub === '.' ? out : `${out}/${sub}`}: ${files.join(', ')}\n`);
  }
  process.stdout.write(`done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

await main();
