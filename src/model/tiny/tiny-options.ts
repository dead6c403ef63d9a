// The options of the tiny checkpoints (./tiny-model.ts for Qwen3 and Qwen3 MoE, ./tiny-hybrid.ts for the
// Qwen3.5 hybrids) and the tensor shape both generate, in one file both import, so neither imports the other.

export interface TinyModelOptions {
  layers?: number;             // default 4
  hidden?: number;             // default 64
  heads?: number;              // default 4
  kvHeads?: number;            // default 2
  headDim?: number;            // default 16
  intermediate?: number;       // default 128
  vocab?: number;              // default 151936 (Qwen3's embedding rows, so every tokenizer id exists)
  seed?: number;               // default 0
  shards?: number;             // N > 1: exactly N weight files, tensors split in order by count (default 1)
  tieWordEmbeddings?: boolean; // default true (like Qwen3-1.7B)
  moe?: TinyMoeOptions;        // present: a Qwen3 MoE model (model_type "qwen3_moe")
  hybrid?: TinyHybridOptions;  // present: a Qwen3.5 hybrid ("qwen3_5", or "qwen3_5_moe" with moe)
}

/** The sparse MLP of a tiny Qwen3 MoE model (HF Qwen3MoeConfig fields). */
export interface TinyMoeOptions {
  experts?: number;            // num_experts (default 8)
  topK?: number;               // num_experts_per_tok (default 2)
  intermediate?: number;       // moe_intermediate_size (default 256)
  normTopkProb?: boolean;      // default true, as the released Qwen3 MoE models
  decoderSparseStep?: number;  // default 1
  mlpOnlyLayers?: number[];    // default none: every layer sparse
}

export type ResolvedTinyOptions = Required<Omit<TinyModelOptions, 'moe' | 'hybrid'>> & { moe?: Required<TinyMoeOptions>; hybrid?: ResolvedHybridOptions };

export interface TinyHybridOptions {
  linearKeyHeads?: number;     // n_k (default 2)
  linearValueHeads?: number;   // n_v (default 4; must differ from n_k and be a multiple of it)
  linearHeadDim?: number;      // d_k = d_v (default 64; llama.cpp assumes them equal)
  convKernel?: number;         // default 4
  fullAttentionInterval?: number; // every Nth layer is full attention (default 4, as released models)
  partialRotaryFactor?: number;   // default 0.25
  sharedExpertIntermediate?: number; // MoE only (default: the experts' size)
  extras?: boolean;            // write a vision tensor and an MTP block the engine must skip (default true)
}

export type ResolvedHybridOptions = Required<TinyHybridOptions>;

export interface TinyTensor { name: string; shape: number[]; values: Float32Array; dtype?: 'F32' }   // stored BF16 unless F32

