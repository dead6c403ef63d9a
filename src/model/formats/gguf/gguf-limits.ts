// How big a GGUF header may be, and why. A model URL is chosen by a room's host and read by every guest,
// so a header is hostile input: every count and length in it is checked against these bounds and against
// the bytes the file can hold BEFORE anything is allocated or looped over (gguf-parse.ts). The figures
// are a few times what the largest real model needs (docs/gguf-and-moe.md, "Limits", has the measured
// Qwen3 header): nothing real comes near them, and a file that passes them costs at most ≈64 MB to parse
// (a header at its limit of 24 MiB: at most ≈24 MB of strings plus a window of one value and a 2 MiB step).

const MiB = 2 ** 20;

export const GGUF_LIMITS = {
  /**
   * The whole header, metadata plus tensor infos. Qwen3's (151,936 tokens, 151,387 merges) is 5.94 MB,
   * Qwen3.5's (248,320 tokens) ≈10 MB scaled from it; the tokenizer arrays are nearly all of it.
   */
  headerBytes: 24 * MiB,
  /** Tensors in a model, all split parts together (Qwen3-235B-A22B: 1,131; one per expert per layer would still fit). */
  tensors: 65_536,
  /** Metadata key/value pairs in one file (real files: 30–60). */
  kvPairs: 65_536,
  /** Elements in one metadata array (the vocabulary: 151,936 for Qwen3, 248,320 for Qwen3.5). */
  arrayElements: 2 ** 20,
  /**
   * Array elements over all of one file's metadata: tokens + token types + merges are 455,259 for Qwen3,
   * ≈744,000 for Qwen3.5. Each string element costs ≈32 bytes of JS heap however short: 2^20 of them ≈32 MB.
   */
  totalArrayElements: 2 ** 20,
  /** Bytes of one metadata value as stored (Qwen3's tokens array: 2.59 MB, merges 2.73 MB, token types 0.61 MB). */
  valueBytes: 16 * MiB,
  /** Bytes of one string (a chat template is ≈4–20 KB). */
  stringBytes: 1 * MiB,
  /** A metadata key, as the GGUF spec bounds it. */
  keyBytes: 65_535,
  /** A tensor name, as gguf.cpp bounds it (GGML_MAX_NAME 64, with its terminating zero). */
  tensorNameBytes: 63,
  /** Dimensions of a tensor (GGML_MAX_DIMS). */
  dims: 4,
  /** Parts of a split model: 256 parts of the hub's 50 GB file limit is 12.8 TB. */
  splitParts: 256,
} as const;

/** The fewest bytes a tensor info can take: name length (8) + n_dims (4) + one ne (8) + type (4) + offset (8). */
export const MIN_TENSOR_INFO_BYTES = 32;
/** The fewest bytes a key/value pair can take: key length (8) + value type (4) + a one-byte value. */
export const MIN_KV_BYTES = 13;
