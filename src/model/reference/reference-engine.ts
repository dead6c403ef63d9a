// ReferenceEngine: the Qwen3 / Qwen3.5 forward pass on the CPU, one LayerEngine over ModelWeights.
// It reads top to bottom like llama2.c; every array's shape is in a comment. It is the oracle the WebGPU
// engine and the room's split pipelines are checked against, and a complete (slow) engine in its own right.
//
// Per layer (x [n, H] the residual stream at positions p; ./layer-table.ts):
//   x += mixer(rms(x) · input_layernorm)           attention (Qwen3, ./mixers/attention.ts), gated attention
//                                                  or Gated DeltaNet (Qwen3.5, ./mixers/gated-*.ts)
//   x += ffn(rms(x) · post_attention_layernorm)    SwiGLU (./ffns/dense.ts) or MoE (./ffns/moe.ts, ./moe.ts)
// KV caches live in ./kv-cache.ts; Gated DeltaNet's recurrent state and its snapshots in ./recurrent-state.ts.

import { type DecodeRequest, type LayerEngine, type LayerRange, type RowCandidates, type RowSampling } from '../engine-types.ts';
import { isLinearLayer, type Linear, type ModelConfig, type ModelWeights } from '../types.ts';
import { decodeRows, sampleThenRun } from '../host-decode.ts';
import { ContextFullError, EngineUsageError, PositionError } from '../engine-errors.ts';
import { bindLayer, layerForward, type BoundLayer } from './layer-table.ts';
import { KvCache } from './kv-cache.ts';
import type { KvCacheType } from '../kv-quant.ts';
import { RecurrentState } from './recurrent-state.ts';
import { decodeLinear, embedRows, type DecodedLinear, matmul, rmsNorm, tensorToF32 } from './ops.ts';

export interface ReferenceEngineOptions {
  /** KV capacity in tokens; default config.maxPositionEmbeddings (storage grows as used). */
  ctx?: number;
  /** Layers to run; default the contiguous range of layers present in the weights. */
  range?: LayerRange;
  /** Store K/V rounded to f16 as the GPU engine does (default true). */
  kvF16?: boolean;
  /** How the KV cache stores a value: f16 (default, or f32 with kvF16 false) or q8_0 blocks (../kv-quant.ts). */
  kvType?: KvCacheType;
  /**
   * Weights are decoded to f32 on first use and kept while their total stays under this many bytes
   * (default 512 MiB): a tiny model runs ~5× faster, a real one keeps what fits. Results are identical.
   */
  decodeBudgetBytes?: number;
  /** The delta rule's form for Gated DeltaNet layers (default recurrent: one token at a time, so results
   *  do not depend on how a prompt is chunked; chunked is HF's WY form, equal up to rounding). */
  deltaRule?: 'recurrent' | 'chunked';
  /** Recurrent-state snapshots kept at most (default 66). */
  maxSnapshots?: number;
}

/** What a hybrid engine's checkpoints cost: the live state and each snapshot hold every linear layer's state. */
export interface SnapshotStats {
  snapshots: number;           // kept now
  positions: number[];         // where, ascending
  bytesPerSnapshot: number;    // conv + delta state of every held linear layer, f32
  bytes: number;               // snapshots · bytesPerSnapshot
}

const DEFAULT_DECODE_BUDGET = 512 * 1024 * 1024;

function heldRange(weights: ModelWeights): LayerRange {
  const indices = [...weights.layers.keys()].sort((a, b) => a - b);
  if (indices.length === 0) return [0, 0];
  return [indices[0]!, indices[indices.length - 1]! + 1];
}

export class ReferenceEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly config: ModelConfig;
  private readonly weights: ModelWeights;
  readonly recurrent: boolean;
  private readonly layers = new Map<number, BoundLayer>();
  private readonly state: RecurrentState;
  private readonly deltaRule: 'recurrent' | 'chunked';
  private readonly finalNorm?: Float32Array;   // [H]
  private readonly head?: Linear;              // [V, H]: lm_head, or the embedding when tied
  private readonly cache: KvCache;
  private readonly decoded = new Map<Linear, DecodedLinear>();
  private readonly decodeBudget: number;
  private decodedBytes = 0;
  /** Expert runs since the engine was made: (layer, expert, tokens); tests count what decode touches. */
  readonly expertRuns: { layer: number; expert: number; tokens: number }[] = [];

  constructor(weights: ModelWeights, opts: ReferenceEngineOptions = {}) {
    if (weights.pending) throw new EngineUsageError('ReferenceEngine: these weights are streamed (openWeights); materializeWeights them first (or use loadWeights)');
    const c = weights.config;
    this.weights = weights;
    this.config = c;
    this.range = opts.range ?? heldRange(weights);
    const [start, end] = this.range;
    if (!(Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start <= end && end <= c.numLayers)) {
      throw new EngineUsageError(`layer range [${start}, ${end}) is not inside the model's ${c.numLayers} layers`);
    }
    for (let i = start; i < end; i++) {
      const layer = weights.layers.get(i);
      if (!layer) throw new EngineUsageError(`layer ${i} is not in the loaded weights (range [${start}, ${end}))`);
      this.layers.set(i, bindLayer(layer));
    }
    this.hasEmbedding = weights.embedding !== undefined;
    const head = weights.lmHead ?? (c.tieWordEmbeddings ? weights.embedding : undefined);
    if (weights.finalNorm && head) {
      this.finalNorm = tensorToF32(weights.finalNorm);
      this.head = head;
    }
    this.hasHead = this.head !== undefined;
    this.decodeBudget = opts.decodeBudgetBytes ?? DEFAULT_DECODE_BUDGET;
    const layers = Array.from({ length: end - start }, (_, i) => start + i);
    const linear = layers.filter((i) => isLinearLayer(c, i));
    this.cache = new KvCache({
      capacity: opts.ctx ?? c.maxPositionEmbeddings, kvWidth: c.numKvHeads * c.headDim, layers: layers.filter((i) => !isLinearLayer(c, i)),
      roundToF16: opts.kvF16 ?? true, kvType: opts.kvType ?? 'f16', headDim: c.headDim,
    });
    const h = c.hybrid;
    this.state = new RecurrentState({
      layers: linear, ...(opts.maxSnapshots === undefined ? {} : { maxSnapshots: opts.maxSnapshots }),
      dims: {
        numKeyHeads: h?.linearNumKeyHeads ?? 1, numValueHeads: h?.linearNumValueHeads ?? 1, keyDim: h?.linearKeyHeadDim ?? 1,
        valueDim: h?.linearValueHeadDim ?? 1, convKernel: h?.convKernel ?? 1, valueHeads: 'grouped',
      },
    });
    this.recurrent = linear.length > 0;
    this.deltaRule = opts.deltaRule ?? 'recurrent';
  }

  /** Context size (KV capacity in tokens). */
  get ctx(): number {
    return this.cache.capacity;
  }

  /** Tokens in the cache of every held layer (after a partial runLayers, the smallest). */
  kvLength(): number {
    const held = this.range[1] - this.range[0];
    if (held === 0) return 0;
    const recurrent = this.state.commonLength();
    return held === this.state.layerCount ? recurrent : Math.min(this.cache.commonLength(), recurrent);
  }

  /** Tokens in the cache of one layer (its KV, or the steps its recurrent state has taken). */
  layerKvLength(layer: number): number {
    return this.state.has(layer) ? this.state.layer(layer).length : this.cache.length(layer);
  }

  /** Cut the KV back to `length` and restore the recurrent layers' snapshot there (nothing changes if one is missing). */
  async truncate(length: number): Promise<void> {
    if (!(Number.isInteger(length) && length >= 0)) throw new EngineUsageError(`truncate: ${length} is not a length`);
    this.state.restore(length);
    this.cache.truncate(length);
  }

  /** A copy of one layer's cached keys and values, [kvLength, Hkv·D] each (tests compare caches with it). */
  cachedKv(layer: number): { keys: Float32Array; values: Float32Array } {
    const n = this.cache.length(layer) * this.cache.kvWidth;
    const v = this.cache.view(layer);
    return { keys: v.keys.slice(0, n), values: v.values.slice(0, n) };
  }

  async snapshot(position: number): Promise<void> {
    if (!this.recurrent) return;
    for (let i = this.range[0]; i < this.range[1]; i++) {
      if (this.layerKvLength(i) !== position) throw new PositionError(`snapshot at ${position}: layer ${i} holds ${this.layerKvLength(i)} tokens`);
    }
    this.state.snapshot(position);
  }

  async releaseSnapshot(position: number): Promise<void> {
    this.state.release(position);
  }

  /** Memory the checkpoints of this engine's recurrent layers take (0 for Qwen3). */
  snapshotStats(): SnapshotStats {
    const positions = this.state.positions();
    const bytesPerSnapshot = this.state.bytesPerSnapshot();
    return { snapshots: positions.length, positions, bytesPerSnapshot, bytes: positions.length * bytesPerSnapshot };
  }

  /** ids [n] -> hidden [n, H]. */
  async embed(ids: number[]): Promise<Float32Array> {
    if (!this.weights.embedding) throw new EngineUsageError(`this engine (layers [${this.range}]) holds no embedding`);
    return embedRows(this.weights.embedding, ids);
  }

  /** Runs layers `range` on hidden [n, H], the tokens at positions [start, start + n) -> [n, H]. */
  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    const [first, end] = range;
    if (!(first >= this.range[0] && end <= this.range[1] && first <= end)) {
      throw new PositionError(`layers [${first}, ${end}) are not inside this engine's [${this.range[0]}, ${this.range[1]})`);
    }
    const H = this.config.hiddenSize;
    if (hidden.length % H !== 0) {
      throw new EngineUsageError(`runLayers: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
    }
    const n = hidden.length / H;
    for (let i = first; i < end; i++) this.checkContinues(i, start, n);
    const positions = Array.from({ length: n }, (_, i) => start + i);
    const x = hidden.slice(); // [n, H], the residual stream; the caller's array is left alone
    for (let i = first; i < end; i++) this.layerForward(i, positions, x);
    return x;
  }

  /** A weight as matmul takes it: decoded to f32 once when the budget allows, else as stored. */
  private weight(w: Linear): Linear | DecodedLinear {
    const hit = this.decoded.get(w);
    if (hit) return hit;
    const bytes = w.rows * w.cols * 4;
    if (this.decodedBytes + bytes > this.decodeBudget) return w;
    const d = decodeLinear(w);
    this.decoded.set(w, d);
    this.decodedBytes += bytes;
    return d;
  }

  /** Checked before any layer runs, so a bad call changes no cache. */
  private checkContinues(layer: number, start: number, n: number): void {
    const length = this.layerKvLength(layer);
    if (start !== length) {
      throw new PositionError(`layer ${layer}: position ${start} does not continue its KV cache of ${length} tokens (expected ${length})`);
    }
    if (length + n > this.cache.capacity) {
      throw new ContextFullError(`layer ${layer}: ${length} + ${n} tokens exceed the context of ${this.cache.capacity}`);
    }
  }

  /** One decoder layer, in place on x [n, H]. */
  private layerForward(index: number, positions: number[], x: Float32Array): void {
    layerForward(this.layers.get(index)!, {
      config: this.config, weight: (w) => this.weight(w), kv: this.cache, deltaRule: this.deltaRule,
      ...(this.state.has(index) ? { state: this.state.layer(index) } : {}),
      onExpert: (expert, tokens) => this.expertRuns.push({ layer: index, expert, tokens }),
    }, positions, x);
  }

  /** Final norm + head on the last row of hidden ([H] or [n, H]) -> logits [V] (decode's rows; goldens compare them). */
  async logits(hidden: Float32Array): Promise<Float32Array> {
    if (!this.head || !this.finalNorm) {
      throw new EngineUsageError(`this engine (layers [${this.range}]) holds no head (final norm + lm_head${this.config.tieWordEmbeddings ? ' / tied embedding' : ''})`);
    }
    const H = this.config.hiddenSize;
    if (hidden.length === 0 || hidden.length % H !== 0) throw new EngineUsageError(`logits: hidden has ${hidden.length} values, not rows of ${H}`);
    const last = hidden.subarray(hidden.length - H);                            // [H]
    return matmul(this.weight(this.head), rmsNorm(last, this.finalNorm, this.config.rmsNormEps), 1); // [V]
  }

  /**
   * Feed the request's tokens (embed + every layer) or take its hidden rows, then each row's candidates
   * from its logits (sortedCandidates). The CPU has no dispatch overhead to save by fusing anything.
   */
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    return decodeRows(this, request);
  }

  async sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    return sampleThenRun(this, hidden, row, range);
  }

  async dispose(): Promise<void> {
    this.cache.truncate(0);
    this.state.clear();
    this.decoded.clear();
    this.decodedBytes = 0;
  }
}
