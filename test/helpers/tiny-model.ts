// Tiny checkpoints for tests, built once and cached under .cache/test-models/<key> (gitignored).
// The key hashes the options and the generator's own source, so a change to the generator rebuilds.
//
//   const dir = await tinyModelDir();                         // 4 layers, H 64, vocab 151936, safetensors
//   const mlc = await tinyModelDir({ format: 'mlc', layers: 2 });

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveTinyOptions, type TinyModelOptions } from '../../src/model/tiny/tiny-model.ts';
import type { TinyGgufOptions } from '../../src/model/tiny/tiny-gguf.ts';
import { writeTinyGgufInto, writeTinyModelInto, type TinyVocabChoice } from '../../src/model/tiny/write-node.ts';

export interface TinyModelDirOptions extends TinyModelOptions {
  format?: 'safetensors' | 'mlc';
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const GENERATOR_SOURCES = [
  'src/model/tiny/tiny-model.ts', 'src/model/tiny/prng.ts', 'src/model/tensor-utils.ts',
  'src/model/formats/safetensors.ts', 'src/model/formats/mlc.ts', 'src/model/formats/md5.ts',
  'src/model/tiny/tiny-gguf.ts', 'src/model/tiny/gguf-mix.ts', 'src/model/tiny/gguf-vocab.ts', 'src/model/formats/gguf/gguf-write.ts',
  'src/model/formats/gguf/ggml-quantize.ts', 'src/model/formats/gguf/ggml-quantize-k.ts',
  'src/model/tiny/tiny-hybrid.ts', 'src/model/formats/qwen35-names.ts', 'src/model/tiny/write-node.ts', 'test/fixtures/chat-templates/qwen3.5.jinja',
];

let generatorHash: Promise<string> | undefined;
const building = new Map<string, Promise<string>>();

async function hashGenerator(): Promise<string> {
  const h = createHash('sha256');
  for (const f of GENERATOR_SOURCES) h.update(await readFile(join(repoRoot, f)));
  return h.digest('hex').slice(0, 12);
}

/** The folder of a tiny checkpoint with these options (built on first use, then reused). */
export async function tinyModelDir(opts: TinyModelDirOptions = {}): Promise<string> {
  const format = opts.format ?? 'safetensors';
  const resolved = resolveTinyOptions(opts);
  generatorHash ??= hashGenerator();
  const key = createHash('sha256').update(JSON.stringify({ format, ...resolved, gen: await generatorHash })).digest('hex').slice(0, 16);
  const dir = join(repoRoot, '.cache', 'test-models', `${format}-L${resolved.layers}-H${resolved.hidden}-V${resolved.vocab}-${key}`);
  return buildOnce(dir, (staging) => writeTinyModelInto(staging, resolved, format).then(() => undefined));
}

export interface TinyGgufDirOptions extends TinyGgufOptions {
  tokenizer?: TinyVocabChoice;   // default qwen3 (the full Qwen3 vocabulary)
  chatTemplate?: string;         // tiny-bpe only (default Qwen3's)
}

/**
 * The folder of a tiny GGUF model and its (first) file. GGUF defaults differ from the safetensors
 * tiny model so that K-quants appear: head_dim 64 (attn_output rows of 256) and intermediate 256.
 */
export async function tinyGgufModel(opts: TinyGgufDirOptions = {}): Promise<{ dir: string; file: string; path: string }> {
  const full: TinyGgufDirOptions = { headDim: 64, intermediate: 256, fileType: 'Q8_0', ...opts };
  generatorHash ??= hashGenerator();
  const key = createHash('sha256').update(JSON.stringify({ format: 'gguf', ...full, gen: await generatorHash })).digest('hex').slice(0, 16);
  const dir = join(repoRoot, '.cache', 'test-models', `gguf-${full.fileType}-${full.tokenizer ?? 'qwen3'}${full.moe ? '-moe' : ''}-${key}`);
  await buildOnce(dir, (staging) => writeTinyGgufInto(staging, full, full.tokenizer, full.chatTemplate).then(() => undefined));
  const { readdir } = await import('node:fs/promises');
  const file = (await readdir(dir)).filter((f) => f.endsWith('.gguf')).sort()[0]!;
  return { dir, file, path: join(dir, file) };
}

async function buildOnce(dir: string, write: (staging: string) => Promise<void>): Promise<string> {
  if (existsSync(dir)) return dir;
  let pending = building.get(dir);
  if (!pending) {
    pending = (async () => {
      // Other test workers may build the same model at once: each writes its own staging folder and
      // renames it into place; the first rename wins and the others discard theirs.
      const staging = `${dir}.partial-${process.pid}-${Math.random().toString(36).slice(2)}`;
      try {
        await write(staging);
        if (!existsSync(dir)) await rename(staging, dir).catch((e: NodeJS.ErrnoException) => {
          if (!existsSync(dir)) throw e;
        });
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
      return dir;
    })();
    building.set(dir, pending);
  }
  return pending;
}
