// The bounds every architecture number is checked against, on their own so config.ts and the GGUF
// config reader (formats/gguf/gguf-config.ts, which config.ts imports) share them without a circle.

/**
 * The largest shape pooled reads, field by field: far past any real Qwen model (the figures in the
 * comments), and small enough that a loop or an allocation sized by one of them ends. A config (or GGUF
 * metadata) with a number past its bound is a ConfigError naming the key and the bound, before anything
 * is sized by it (a qwen3moe header with block_count 2^52 once looped while its memory grew).
 */
export const CONFIG_LIMITS = {
  layers: 1024,                  // Qwen3-235B-A22B: 94
  hiddenSize: 65_536,            // Qwen3-32B: 5120
  heads: 1024,                   // Qwen3-235B-A22B: 64 query heads
  headDim: 1024,                 // Qwen3: 128, Qwen3.5: 256
  intermediateSize: 2 ** 20,     // Qwen3-32B: 25,600
  vocabSize: 2 ** 20,            // Qwen3: 151,936, Qwen3.5: 248,320
  experts: 1024,                 // Qwen3 MoE: 128, Qwen3.5-397B: 512
  contextLength: 2 ** 24,        // 40,960 to 262,144 (1,010,000 for the 1M-context releases)
  convKernel: 64,                // Qwen3.5: 4
  ropeTheta: 1e12,               // 1e6; Qwen3.5: 1e7
  other: 2 ** 24,                // any other count
} as const;
