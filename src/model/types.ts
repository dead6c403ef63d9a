// Shared contracts of src/model. Every other layer (gpu engine, room, agent) codes against these.
// Shapes are [rows, cols] row-major unless said otherwise; "N" = output features, "K" = input features.

/** Qwen3 dense configuration, normalised from config.json (or mlc-chat-config.json). */
export interface ModelConfig {
  modelType: 'qwen3';
  hiddenSize: number;          // H, e.g. 2048
  numLayers: number;           // L, e.g. 28
  numHeads: number;            // query heads, e.g. 16
  numKvHeads: number;          // KV heads (GQA), e.g. 8
  headDim: number;             // D, e.g. 128 (not always H / numHeads)
  intermediateSize: number;    // I, e.g. 6144
  vocabSize: number;           // V (embedding rows), e.g. 151936
  ropeTheta: number;           // e.g. 1e6
  rmsNormEps: number;          // e.g. 1e-6
  tieWordEmbeddings: boolean;  // logits = x · embedᵀ when true
  maxPositionEmbeddings: number;
  bosTokenId?: number;
  eosTokenIds: number[];       // generation stops on any of these
}

/** Raw tensor bytes exactly as stored (little-endian). dtype names follow safetensors. */
export type StoredDType = 'BF16' | 'F16' | 'F32' | 'U32';

export interface TensorData {
  name: string;                // name in the file, for error messages
  dtype: StoredDType;
  shape: number[];
  bytes: Uint8Array;           // byteLength = product(shape) * sizeof(dtype)
}

/** A dense weight matrix [N, K] (BF16, F16 or F32). */
export interface DenseLinear {
  kind: 'dense';
  rows: number;                // N
  cols: number;                // K
  weight: TensorData;          // shape [N, K]
}

/**
 * MLC q4f16_1: group size 32. qweight U32 [N, K/8], element k of a row at bits (k%8)*4 of word k/8
 * (low nibble first); scales F16 [N, K/32]; w = (q − 7) · scale.
 */
export interface Q4Linear {
  kind: 'q4f16_1';
  rows: number;                // N
  cols: number;                // K (multiple of 32)
  qweight: TensorData;         // U32 [N, K/8]
  scales: TensorData;          // F16 [N, K/32]
}

export type Linear = DenseLinear | Q4Linear;

/**
 * One decoder layer in canonical stacked form, the same for every file format:
 * q, k, v rows are stacked into one matrix (MLC's c_attn layout) and gate, up into another
 * (MLC's gate_up_proj layout), so an engine can do each with one matvec.
 */
export interface LayerWeights {
  index: number;
  inputNorm: TensorData;       // [H]
  qkv: Linear;                 // [(numHeads + 2·numKvHeads)·D, H]: rows q (numHeads·D), k, v (numKvHeads·D each)
  qNorm: TensorData;           // [D]
  kNorm: TensorData;           // [D]
  o: Linear;                   // [H, numHeads·D]
  postNorm: TensorData;        // [H]
  gateUp: Linear;              // [2·I, H]: rows gate (I), then up (I)
  down: Linear;                // [H, I]
}

/** Which parts of a model a device needs. Layers are a half-open range [start, end). */
export interface WeightRequest {
  layers: [number, number];
  embedding?: boolean;         // token embedding (also the head when tied)
  head?: boolean;              // final norm + lm head (loads the embedding too when tied)
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
}

export interface LoadProgress {
  bytesDone: number;
  bytesTotal: number;
  tensorsDone: number;
  tensorsTotal: number;
}

/** What a device holds after loading. Complete or not at all: a failed load throws, never half-fills. */
export interface ModelWeights {
  config: ModelConfig;
  format: 'safetensors' | 'mlc';
  layers: Map<number, LayerWeights>;
  embedding?: Linear;          // [V, H]
  finalNorm?: TensorData;      // [H]
  lmHead?: Linear;             // [V, H]; absent when tied (use embedding)
}

/**
 * Where model files come from: an HF model id, a base URL with the same layout, or a local folder.
 * Paths are relative to the model root ("config.json", "model-00001-of-00002.safetensors").
 */
export interface ModelSource {
  readonly label: string;      // for messages: "Qwen/Qwen3-1.7B@main", "/models/tiny", "http://…"
  /** The whole file. */
  readFile(path: string): Promise<Uint8Array>;
  /** Bytes [start, end) of a file. Falls back to a full read where the server ignores Range. */
  readRange(path: string, start: number, end: number): Promise<Uint8Array>;
  /** True when the file exists (for optional files like model.safetensors.index.json). */
  exists(path: string): Promise<boolean>;
}
