// The tokenizer, chat template and config a page reads from a model URL, kept in this browser like the
// weights (src/room/weight-cache.ts, IndexedDB, keyed by the model URL as the room keys its weights): a
// second load reads tokenizer.json (11 MB for Qwen3) from the cache, not the network. A folder on this
// device is read as it is (nothing to download).
import type { ModelSource } from '../model/types.ts';
import { CachingSource, IndexedDbByteStore, type ByteStore } from '../room/weight-cache.ts';

let shared: ByteStore | undefined;

/** `source` (resolved from `url`) with every read served from, and saved to, this browser's model cache. */
export function cachedModelSource(source: ModelSource, url: string, store: ByteStore = (shared ??= new IndexedDbByteStore())): CachingSource {
  return new CachingSource(source, store, new URL(url, globalThis.location?.href).href);
}
