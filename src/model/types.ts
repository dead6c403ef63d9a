// Shared contracts of src/model. Every other layer (gpu engine, room, agent) codes against these.
// Shapes are [rows, cols] row-major unless said otherwise; "N" = output features, "K" = input features.

/**
 * Qwen3 configuration, normalised from config.json, mlc-chat-config.json or GGUF metadata.
 * modelType "qwen3" is dense; "qwen3_moe" (GGUF "qwen3moe") has `moe` and a sparse MLP in the layers
 * that isMoeLayer() names, a dense SwiGLU of intermediateSize in the others.
 * "qwen3_5" / "qwen3_5_moe" (GGUF "qwen35" / "qwen35moe"; Qwen3.5 and Qwen3.6) are hybrids: `hybrid`
 * says which layers are Gated DeltaNet (linear attention with a recurrent state) and which gated full
 * attention; "qwen3_5_moe" has `moe` with a shared expert in every layer (docs/hybrid-models.md).
 */
export interface ModelConfig {
  modelType: ModelType;
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
  moe?: MoeConfig;             // present exactly when modelType is "qwen3_moe" or "qwen3_5_moe"
  hybrid?: HybridConfig;       // present exactly when modelType is "qwen3_5" or "qwen3_5_moe"
}

export type ModelType = 'qwen3' | 'qwen3_moe' | 'qwen3_5' | 'qwen3_5_moe';

/** A hybrid layer's token mixer (HF layer_types). */
export type LayerType = 'linear_attention' | 'full_attention';

/**
 * The Qwen3.5 hybrid (HF Qwen3_5TextConfig names in comments). Linear-attention layers are Gated
 * DeltaNet with n_k key heads of d_k and n_v value heads of d_v (n_v a multiple of n_k); full-attention
 * layers are Qwen3 attention with a sigmoid output gate and RoPE on the first rotaryDim dims of a head.
 */
export interface HybridConfig {
  layerTypes: LayerType[];     // [L] layer_types ("full_attention" every 4th layer in released models)
  linearNumKeyHeads: number;   // n_k, linear_num_key_heads (16)
  linearNumValueHeads: number; // n_v, linear_num_value_heads (32)
  linearKeyHeadDim: number;    // d_k, linear_key_head_dim (128)
  linearValueHeadDim: number;  // d_v, linear_value_head_dim (128)
  convKernel: number;          // K, linear_conv_kernel_dim (4): causal depthwise conv over the q|k|v channels
  rotaryDim: number;           // head_dim · partial_rotary_factor (256 · 0.25 = 64)
}

/** Does layer `i` of a hybrid model carry recurrent state (Gated DeltaNet)? False for every Qwen3 layer. */
export function isLinearLayer(config: ModelConfig, i: number): boolean {
  return config.hybrid?.layerTypes[i] === 'linear_attention';
}

/**
 * Bytes of one Gated DeltaNet layer's recurrent state, f32: the conv state (K−1)·C (C = 2·n_k·d_k +
 * n_v·d_v) and the delta state n_v·d_k·d_v. A device keeps it live, and once more per snapshot.
 */
export function linearStateBytes(config: ModelConfig): number {
  const h = config.hybrid;
  if (!h) return 0;
  const C = 2 * h.linearNumKeyHeads * h.linearKeyHeadDim + h.linearNumValueHeads * h.linearValueHeadDim;
  return ((h.convKernel - 1) * C + h.linearNumValueHeads * h.linearKeyHeadDim * h.linearValueHeadDim) * 4;
}

/** Bytes one snapshot of the layers [start, end) takes (their linear layers' state; 0 for none). */
export function snapshotBytes(config: ModelConfig, [start, end]: readonly [number, number]): number {
  let n = 0;
  for (let i = start; i < end; i++) if (isLinearLayer(config, i)) n++;
  return n * linearStateBytes(config);
}

/** Does the half-open layer range [start, end) hold a linear-attention layer? */
export function holdsLinearLayers(config: ModelConfig, [start, end]: readonly [number, number]): boolean {
  for (let i = start; i < end; i++) if (isLinearLayer(config, i)) return true;
  return false;
}

/** The sparse MLP of Qwen3 MoE (HF Qwen3MoeConfig names in comments). */
export interface MoeConfig {
  numExperts: number;          // E, num_experts (128 for Qwen3-30B-A3B)
  numExpertsPerTok: number;    // k, num_experts_per_tok (8)
  moeIntermediateSize: number; // I_e, moe_intermediate_size (768)
  normTopkProb: boolean;       // norm_topk_prob: renormalise the k routing weights to sum to 1
  decoderSparseStep: number;   // decoder_sparse_step: layer i is sparse when (i + 1) % step == 0 ...
  mlpOnlyLayers: number[];     // mlp_only_layers: ... and i is not listed here
  /** Qwen3.5 MoE: shared_expert_intermediate_size I_s of the shared expert every token also runs. */
  sharedExpertIntermediateSize?: number;
}

/** HF Qwen3MoeDecoderLayer's rule: does layer `i` have the sparse MoE block (else a dense MLP)? */
export function isMoeLayer(config: ModelConfig, i: number): boolean {
  const m = config.moe;
  if (!m) return false;
  return !m.mlpOnlyLayers.includes(i) && m.numExperts > 0 && (i + 1) % m.decoderSparseStep === 0;
}

/** Raw tensor bytes exactly as stored (little-endian). dtype names follow safetensors. */
export type StoredDType = 'BF16' | 'F16' | 'F32' | 'U32';

export interface TensorData {
  name: string;                // name in the file, for error messages
  dtype: StoredDType;
  shape: number[];
  bytes: Uint8Array;           // byteLength = product(shape) * sizeof(dtype); empty while `stream` is set
  /** Streamed (src/model/load-stream.ts): the bytes are not here but arrive through `ModelWeights.pending`. */
  stream?: StreamRef;
}

/**
 * Where a streamed tensor's bytes come from: the file tensors whose bytes, back to back in this order, are
 * its bytes (q | k | v of a fused matrix, say). They arrive as pieces through `ModelWeights.pending`.
 */
export interface StreamRef {
  parts: { tensor: string; bytes: number }[];
  byteLength: number;          // Σ parts' bytes
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

/** The ggml tensor types pooled reads from GGUF (ggml_type names). */
export type GgmlType = 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_1' | 'Q5_0' | 'Q5_1' | 'Q4_K' | 'Q5_K' | 'Q6_K';

/**
 * A matrix [N, K] held as GGUF stores it: ggml blocks, never re-quantized or widened at load. Rows are
 * cut into consecutive segments, each one ggml type with its own bytes, because a fused matrix can
 * mix types (Q4_K_M stores q and k as Q4_K and v as Q6_K in some layers; row counts stay exact).
 *
 * Segment bytes: row r of a segment (r from 0) is bytes [r·rowBytes, (r+1)·rowBytes) with
 * rowBytes = K / blockSize · blockBytes; a row is K / blockSize blocks back to back, in K order. Block
 * layouts (from ggml-common.h; f16 little-endian; "@n" is the byte offset inside the block):
 *   F32 / F16 / BF16: one value per "block" (4 / 2 / 2 bytes), plain row-major.
 *   Q8_0 (32 values, 34 B): d f16 @0 | qs i8[32] @2.                     w[j] = qs[j]·d
 *   Q4_0 (32, 18 B): d f16 @0 | qs u8[16] @2.     w[j] = ((qs[j] & 15) − 8)·d, w[j+16] = ((qs[j] >> 4) − 8)·d
 *   Q4_1 (32, 20 B): d f16 @0 | m f16 @2 | qs[16] @4.  w[j] = (qs[j] & 15)·d + m, w[j+16] = (qs[j] >> 4)·d + m
 *   Q5_0 (32, 22 B): d f16 @0 | qh u32 @2 | qs[16] @6.  q = nibble | ((qh >> j) & 1) << 4 (j over 0..31, the
 *                    5th bit of value j is bit j of qh); w = (q − 16)·d
 *   Q5_1 (32, 24 B): d f16 @0 | m f16 @2 | qh u32 @4 | qs[16] @8.        w = q·d + m (q as Q5_0)
 *   Q4_K (256, 144 B): d f16 @0 | dmin f16 @2 | scales u8[12] @4 | qs u8[128] @16. Sub-block s (32 values)
 *                    has a 6-bit scale sc and min m: s < 4: sc = scales[s] & 63, m = scales[s+4] & 63;
 *                    s ≥ 4: sc = (scales[s+4] & 15) | (scales[s−4] >> 6) << 4, m = (scales[s+4] >> 4) |
 *                    (scales[s] >> 6) << 4. Values 64p + l (l < 32) are qs[32p + l] & 15 (sub-block 2p),
 *                    values 64p + 32 + l are qs[32p + l] >> 4 (sub-block 2p+1); w = (d·sc)·q − (dmin·m)
 *   Q5_K (256, 176 B): d @0 | dmin @2 | scales[12] @4 | qh u8[32] @16 | qs u8[128] @48. As Q4_K, and
 *                    the 5th bit (+16) of value 64p + l is bit 2p of qh[l], of 64p + 32 + l bit 2p+1.
 *   Q6_K (256, 210 B): ql u8[128] @0 | qh u8[64] @128 | scales i8[16] @192 | d f16 @208. For half h
 *                    (values 128h..) and l < 32, with a = ql[64h + l], b = ql[64h + 32 + l], c = qh[32h + l]:
 *                    value 128h+l = (a & 15 | (c & 3) << 4) − 32, +32: (b & 15 | (c >> 2 & 3) << 4) − 32,
 *                    +64: (a >> 4 | (c >> 4 & 3) << 4) − 32, +96: (b >> 4 | (c >> 6) << 4) − 32;
 *                    w = (d·scales[8h + l/16 + {0,2,4,6}])·q
 * Block sizes 18, 22, 34 and 210 are not multiples of 4: blocks and rows are only 2-byte aligned.
 * Dequantization rounds each operation to f32 in the order written (C without FMA contraction).
 */
export interface GgmlLinear {
  kind: 'ggml';
  rows: number;                // N (sum of segment rows)
  cols: number;                // K (a multiple of every segment's block size)
  segments: GgmlSegment[];
}

export interface GgmlSegment {
  name: string;                // GGUF tensor name, for messages ("blk.3.attn_v.weight")
  type: GgmlType;
  rows: number;                // rows of the matrix this segment holds, after the previous segments'
  bytes: Uint8Array;           // rows × rowBytes; empty while `stream` is set
  stream?: StreamRef;          // streamed: see TensorData.stream
}

export type Linear = DenseLinear | Q4Linear | GgmlLinear;

/**
 * One decoder layer in canonical form, the same for every family and file format:
 *   x += mixer(rms(x) · inputNorm);  x += ffn(rms(x) · postNorm)
 * The mixer (token mixing) and the ffn (per-token MLP) are discriminated unions on `kind`; each engine
 * keeps one table from kind to the ops that run it (src/gpu/layers.ts, src/model/reference/layer-table.ts),
 * so a new kind is a weights shape here, a row in each table and the files the rows name.
 *   Qwen3 dense:   attention + dense        Qwen3 MoE: attention + moe (dense in HF's mlp_only layers)
 *   Qwen3.5/3.6:   gated_attention | gated_delta_net, + dense or moe with a shared expert
 * Every norm weight is multiplicative, y = x̂ · w: HF's zero-centred Qwen3.5 norms ((1 + w)) are stored
 * with the 1 added, as llama.cpp's converter writes them (docs/hybrid-models.md).
 */
export interface DecoderLayerWeights {
  index: number;
  inputNorm: TensorData;       // [H] input_layernorm
  postNorm: TensorData;        // [H] post_attention_layernorm
  mixer: MixerWeights;
  ffn: FfnWeights;
}

export type MixerWeights = AttentionWeights | GatedAttentionWeights | GatedDeltaNetWeights;
export type MixerKind = MixerWeights['kind'];
export type FfnWeights = DenseFfnWeights | MoeFfnWeights;
export type FfnKind = FfnWeights['kind'];

/**
 * Qwen3 attention (HF Qwen3Attention): q, k, v rows stacked into one matrix (MLC's c_attn layout) so an
 * engine does them with one matvec; per-head RMSNorm on q and k, RoPE (NeoX halves) on all D dims.
 */
export interface AttentionWeights {
  kind: 'attention';
  qkv: Linear;                 // [(numHeads + 2·numKvHeads)·D, H]: rows q (numHeads·D), k, v (numKvHeads·D each)
  qNorm: TensorData;           // [D]
  kNorm: TensorData;           // [D]
  o: Linear;                   // [H, numHeads·D]
}

/**
 * Gated full attention (HF Qwen3NextAttention). q_proj holds, per query head, D query rows then D gate
 * rows; attention output · sigmoid(gate) goes through o. RoPE (NeoX halves) on the first rotaryDim dims.
 */
export interface GatedAttentionWeights {
  kind: 'gated_attention';
  qkv: Linear;                 // [Hq·2D + 2·Hkv·D, H]: q_proj rows (head h: query 2hD.., gate 2hD+D..), then k, v
  qNorm: TensorData;           // [D]
  kNorm: TensorData;           // [D]
  o: Linear;                   // [H, Hq·D]
}

/**
 * Gated DeltaNet (HF Qwen3_5GatedDeltaNet). C = 2·n_k·d_k + n_v·d_v conv channels (q | k | v).
 *   mixed = conv1d_causal(qkv) then SiLU; q, k L2-normalised (q also · 1/√d_k); β = σ(b);
 *   g = A · softplus(a + dtBias); per value head j (key head kh(j)): S ← e^g·S; S += k (β(v − Sᵀk))ᵀ;
 *   o = Sᵀq; y = RMSNorm(o) · norm · silu(z); out = y · outᵀ.
 * `valueHeads` says which key head a value head reads: grouped (HF checkpoints: j / (n_v/n_k)) or tiled
 * (llama.cpp's Qwen3.5 GGUFs, whose converter reorders value heads: j mod n_k). Outputs do not change.
 */
export interface GatedDeltaNetWeights {
  kind: 'gated_delta_net';
  qkvz: Linear;                // [C + n_v·d_v, H]: in_proj_qkv rows (q n_k·d_k, k n_k·d_k, v n_v·d_v), then in_proj_z
  ba: Linear;                  // [2·n_v, H]: in_proj_b rows (β logits), then in_proj_a (decay inputs)
  conv: TensorData;            // [C, K] depthwise taps; tap K−1 weighs the current token
  a: TensorData;               // [n_v] F32, A = −exp(A_log) (llama.cpp's ssm_a)
  dtBias: TensorData;          // [n_v] dt_bias
  norm: TensorData;            // [d_v] the gated RMSNorm's plain weight
  out: Linear;                 // [H, n_v·d_v] out_proj
  valueHeads: 'grouped' | 'tiled';
}

/** The SwiGLU MLP: down(silu(gate x) · up x), gate and up stacked (MLC's gate_up_proj layout). */
export interface DenseFfnWeights {
  kind: 'dense';
  gateUp: Linear;              // [2·I, H]: rows gate (I), then up (I)
  down: Linear;                // [H, I]
}

/**
 * The sparse MLP (HF Qwen3MoeSparseMoeBlock), and in Qwen3.5 MoE a shared expert every token also runs,
 * gated by sigmoid(shared_expert_gate · x) and added to the routed sum.
 */
export interface MoeFfnWeights {
  kind: 'moe';
  moe: MoeMlpWeights;
  shared?: SharedExpertWeights; // Qwen3.5 MoE; absent in Qwen3 MoE
}

/**
 * The routed experts, stacked along rows as GGUF stores them (ffn_{gate,up,down}_exps): expert e of
 * `gate` is rows [e·I_e, (e+1)·I_e), of `down` rows [e·H, (e+1)·H).
 *   logits = router · x                 [E]
 *   p = softmax(logits) (f32); top-k by p (ties: lower expert id); p /= Σ top-k when normTopkProb
 *   y = Σ over the chosen experts, in ascending expert id, of p_e · down_e(silu(gate_e x) · up_e x)
 */
export interface MoeMlpWeights {
  numExperts: number;          // E
  topK: number;                // k
  normTopkProb: boolean;
  intermediate: number;        // I_e
  router: Linear;              // [E, H]   (HF mlp.gate.weight, GGUF ffn_gate_inp, F32 in GGUF files)
  gate: Linear;                // [E·I_e, H]
  up: Linear;                  // [E·I_e, H]
  down: Linear;                // [E·H, I_e]
}

export interface SharedExpertWeights {
  intermediate: number;        // I_s
  gateUp: Linear;              // [2·I_s, H]
  down: Linear;                // [H, I_s]
  gate: Linear;                // [1, H] shared_expert_gate
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

export type WeightFormat = 'safetensors' | 'mlc' | 'gguf';

/** What a device holds after loading. Complete or not at all: a failed load throws, never half-fills. */
export interface ModelWeights {
  config: ModelConfig;
  format: WeightFormat;
  layers: Map<number, DecoderLayerWeights>;
  embedding?: Linear;          // [V, H]
  finalNorm?: TensorData;      // [H]
  lmHead?: Linear;             // [V, H]; absent when tied (use embedding)
  /**
   * Set by openWeights (src/model/load-stream.ts): the big tensors carry a `stream` instead of bytes, and
   * this delivers their bytes once, in bounded pieces. The WebGPU engine writes them into its buffers as
   * they pass; materializeWeights fills them in for anything that needs bytes in JS (the reference engine).
   */
  pending?: PendingWeights;
}

/** Bytes [offset, offset + bytes.byteLength) of one file tensor. Valid only during the onPiece call. */
export interface WeightPiece {
  tensor: string;
  offset: number;
  bytes: Uint8Array;
}

export interface PendingWeights {
  /** Bytes of every streamed file tensor, by name. */
  readonly tensors: ReadonlyMap<string, number>;
  /**
   * Read every streamed tensor's bytes once, in pieces, awaiting onPiece before a piece's bytes leave
   * the in-flight budget (LOAD_IN_FLIGHT_BYTES). Complete or throws; runs at most once.
   */
  run(onPiece: (piece: WeightPiece) => void | Promise<void>): Promise<void>;
  /** Most bytes ever in flight (read or being read, not yet handed back by onPiece). */
  readonly peakInFlightBytes: number;
}

export interface ReadFileOptions {
  maxBytes?: number;
}

/**
 * Where model files come from: an HF model id, a base URL with the same layout, or a local folder.
 * Paths are relative to the model root ("config.json", "model-00001-of-00002.safetensors").
 */
export interface ModelSource {
  readonly label: string;      // for messages: "Qwen/Qwen3-1.7B@main", "/models/tiny", "http://…"
  /**
   * The whole file. maxBytes: the most it may be (an MLC shard's recorded size, say); a source that can
   * only tell by reading (HTTP) stops there and throws instead of reading whatever a server sends.
   */
  readFile(path: string, opts?: ReadFileOptions): Promise<Uint8Array>;
  /**
   * Bytes [start, end) of a file. Falls back to a full read where the server ignores Range. onBytes: told of
   * bytes as they arrive (a source that streams them; others may say nothing until the read resolves), so a
   * slow link's load shows progress before a whole range is in.
   */
  readRange(path: string, start: number, end: number, onBytes?: (n: number) => void): Promise<Uint8Array>;
  /** True when the file exists (for optional files like model.safetensors.index.json). */
  exists(path: string): Promise<boolean>;
  /**
   * When the model is a single GGUF (or the first part of a split one): its path. Set by the resolver
   * for a .gguf URL, a Hugging Face "repo:QUANT" spec or a local .gguf file / folder holding one.
   */
  readonly modelFile?: string;
  /** Byte length of a file, where the source can tell without reading it (GGUF headers read up to it). */
  size?(path: string): Promise<number>;
}
