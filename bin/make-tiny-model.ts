// npm run make-tiny-model -- --out DIR [--layers N] [--hidden H] [--heads A] [--kv-heads K]
//   [--head-dim D] [--intermediate I] [--vocab tokenizer|N] [--seed S] [--format safetensors|mlc|both]
//   [--shards N] [--untied]
// Writes a Qwen3 checkpoint with seeded random weights in the layout of a real repository.

import { parseArgs } from 'node:util';
import { QWEN3_VOCAB, type TinyModelOptions } from '../src/model/tiny/tiny-model.ts';
import { writeTinyModel, type TinyFormatChoice } from '../src/model/tiny/write-node.ts';

const USAGE = `usage: npm run make-tiny-model -- --out DIR [options]
  --layers N          decoder layers (default 4)
  --hidden H          hidden size (default 64)
  --heads A           query heads (default 4)
  --kv-heads K        key/value heads (default 2)
  --head-dim D        head dimension (default 16)
  --intermediate I    MLP size (default 128)
  --vocab tokenizer|N embedding rows; "tokenizer" = ${QWEN3_VOCAB}, Qwen3's (default)
  --seed S            random seed (default 0); the same seed gives the same bytes
  --format F          safetensors | mlc | both (default safetensors; both → DIR/safetensors and DIR/mlc)
  --shards N          exactly N weight files, tensors split in order (safetensors adds model.safetensors.index.json)
  --untied            write a separate lm_head instead of tying it to the embedding`;

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
        untied: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
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
  if (!['safetensors', 'mlc', 'both'].includes(format)) fail(`--format must be safetensors, mlc or both, got "${format}"`);
  const vocabArg = values.vocab as string | undefined;
  const opts: TinyModelOptions = {};
  const set = <K extends keyof TinyModelOptions>(k: K, v: TinyModelOptions[K] | undefined) => { if (v !== undefined) opts[k] = v; };
  set('layers', int('layers', values.layers as string | undefined));
  set('hidden', int('hidden', values.hidden as string | undefined));
  set('heads', int('heads', values.heads as string | undefined));
  set('kvHeads', int('kv-heads', values['kv-heads'] as string | undefined));
  set('headDim', int('head-dim', values['head-dim'] as string | undefined));
  set('intermediate', int('intermediate', values.intermediate as string | undefined));
  set('vocab', vocabArg === undefined || vocabArg === 'tokenizer' ? QWEN3_VOCAB : int('vocab', vocabArg));
  set('seed', int('seed', values.seed as string | undefined));
  set('shards', int('shards', values.shards as string | undefined));
  if (values.untied) opts.tieWordEmbeddings = false;
  const started = performance.now();
  let written: Record<string, string[]>;
  try {
    written = await writeTinyModel(out, opts, format);
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
