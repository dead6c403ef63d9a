// CpuEngine: a LayerEngine on the WASM SIMD128 kernels (src/cpu/asm/), for devices without a usable GPU.
// Same contract and semantics as the reference (src/model/reference/reference-engine.ts): an f16 KV cache
// per attention layer (./kv-cache.ts), Gated DeltaNet state in the kernels' memory and its snapshots
// (./recurrent-state.ts, the reference's semantics), positions checked before any cache changes. Weights sit in the kernels' memory as the
// file stores them (./create-engine.ts places them); activations are f32.
import { type DecodeRequest, type LayerEngine, type LayerRange, type RowCandidates, type RowSampling } from '../model/engine-types.ts';
import { ContextFullError, EngineUsageError, PositionError } from '../model/engine-errors.ts';
import { decodeRows, sampleThenRun } from '../model/host-decode.ts';
import type { KvCacheType } from '../model/kv-quant.ts';
import type { ModelConfig } from '../model/types.ts';
import type { CpuKvCache } from './kv-cache.ts';
import type { CpuRecurrentState } from './recurrent-state.ts';
import type { SimdPath } from './simd-path.ts';
import { layerForward, type CpuLayer } from './layers.ts';
import type { CpuActivations, WasmKernels, WasmLinear } from './wasm-kernels.ts';

export interface CpuEngineParts {
  kernels: WasmKernels;
  config: ModelConfig;
  range: LayerRange;
  layers: Map<number, CpuLayer>;
  cache: CpuKvCache;
  state: CpuRecurrentState;
  embedding?: WasmLinear;
  head?: { norm: number; weight: WasmLinear };
  weightBytes: number;
}

export interface CpuEngineStats {
  engine: 'wasm';
  simd: SimdPath;              // the kernels' build: 'relaxed' (relaxed SIMD: fused multiply-adds) or 'plain' (SIMD128 only)
  activations: CpuActivations; // the linears' inputs: 'f32' (exact) or 'q8' (quantized per 32 values, integer dots)
  threads: number;             // threads the linears run on
  poolJobs: number;            // linears split across the thread pool since the engine was made (0 on one thread)
  weightBytes: number;         // weight bytes in the kernels' memory
  memoryBytes: number;         // the whole memory (weights, KV cache, scratch)
  kv: KvCacheType;             // how the KV cache stores K/V (f16 or q8_0 blocks)
  kvBytes: number;
  bytesRead: number;           // weight bytes the linears have read since the engine was made
  layerTokens: number;         // tokens run through this engine's layers (per runLayers call) since it was made
  snapshots: number;           // recurrent-state snapshots kept now
  snapshotPositions: number[];
  bytesPerSnapshot: number;    // every held linear layer's conv + delta state, f32
  snapshotBytes: number;
  scratchPeakBytes: number;    // the deepest frame's bytes above what is placed for good, since the engine was made (./scratch-bytes.ts models it)
}

export class CpuEngine implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly recurrent: boolean;
  readonly config: ModelConfig;
  /** Expert runs since the engine was made: (layer, expert, tokens); tests count what decode touches. */
  readonly expertRuns: { layer: number; expert: number; tokens: number }[] = [];
  private readonly p: CpuEngineParts;
  private disposed = false;
  private layerTokens = 0;
  /** Bytes placed for good when the engine was made (weights, KV cache, recurrent state); frames go above. */
  private readonly placed: number;

  constructor(parts: CpuEngineParts) {
    this.p = parts;
    this.placed = parts.kernels.used;
    this.config = parts.config;
    this.range = parts.range;
    this.hasEmbedding = parts.embedding !== undefined;
    this.hasHead = parts.head !== undefined;
    this.recurrent = parts.state.layerCount > 0;
  }

  get ctx(): number {
    return this.p.cache.capacity;
  }

  stats(): CpuEngineStats {
    const positions = this.p.state.positions(), perSnapshot = this.p.state.bytesPerSnapshot();
    return {
      engine: 'wasm', simd: this.p.kernels.simd, activations: this.p.kernels.activations, threads: this.p.kernels.threads, poolJobs: this.p.kernels.poolJobs, weightBytes: this.p.weightBytes,
      memoryBytes: this.p.kernels.memory.buffer.byteLength, kv: this.p.cache.type, kvBytes: this.p.cache.bytes, bytesRead: this.p.kernels.bytesRead,
      layerTokens: this.layerTokens, snapshots: positions.length, snapshotPositions: positions,
      bytesPerSnapshot: perSnapshot, snapshotBytes: positions.length * perSnapshot,
      scratchPeakBytes: this.p.kernels.peak - this.placed,
    };
  }

  kvLength(): number {
    const held = this.range[1] - this.range[0];
    if (held === 0) return 0;
    const recurrent = this.p.state.commonLength();
    return held === this.p.state.layerCount ? recurrent : Math.min(this.p.cache.commonLength(), recurrent);
  }

  layerKvLength(layer: number): number {
    return this.p.state.has(layer) ? this.p.state.layer(layer).length : this.p.cache.length(layer);
  }

  /** A copy of one layer's cached keys and values, [kvLength, Hkv·D] each, as f32. */
  cachedKv(layer: number): { keys: Float32Array; values: Float32Array } {
    return this.p.cache.read(layer);
  }

  async truncate(length: number): Promise<void> {
    this.alive();
    if (!(Number.isInteger(length) && length >= 0)) throw new EngineUsageError(`truncate: ${length} is not a length`);
    this.p.state.restore(length);
    this.p.cache.truncate(length);
  }

  async snapshot(position: number): Promise<void> {
    this.alive();
    if (!this.recurrent) return;
    for (let i = this.range[0]; i < this.range[1]; i++) {
      if (this.layerKvLength(i) !== position) throw new PositionError(`snapshot at ${position}: layer ${i} holds ${this.layerKvLength(i)} tokens`);
    }
    this.p.state.snapshot(position);
  }

  async releaseSnapshot(position: number): Promise<void> {
    this.p.state.release(position);
  }

  async embed(ids: number[]): Promise<Float32Array> {
    this.alive();
    const e = this.p.embedding;
    if (!e) throw new EngineUsageError(`this engine (layers [${this.range}]) holds no embedding`);
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= e.rows) throw new RangeError(`embedding ${e.name}: token id ${id} outside [0, ${e.rows})`);
    }
    return this.p.kernels.rows(e, ids);
  }

  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    this.alive();
    const [first, end] = range;
    if (!(first >= this.range[0] && end <= this.range[1] && first <= end)) {
      throw new PositionError(`layers [${first}, ${end}) are not inside this engine's [${this.range[0]}, ${this.range[1]})`);
    }
    const H = this.config.hiddenSize;
    if (hidden.length % H !== 0) throw new EngineUsageError(`runLayers: hidden has ${hidden.length} values, not a whole number of rows of ${H}`);
    const n = hidden.length / H;
    for (let i = first; i < end; i++) this.checkContinues(i, start, n);
    const k = this.p.kernels;
    if (end > first) this.layerTokens += n;
    return k.frame(() => {
      const xp = k.input(hidden);
      for (let i = first; i < end; i++) {
        layerForward(this.p.layers.get(i)!, {
          k, config: this.config, kv: this.p.cache,
          ...(this.p.state.has(i) ? { state: this.p.state.layer(i) } : {}),
          onExpert: (expert, tokens) => this.expertRuns.push({ layer: i, expert, tokens }),
        }, start, n, xp);
      }
      return k.f32(xp, n * H).slice();
    });
  }

  /** Final norm + head on the last row of hidden ([H] or [n, H]) -> logits [V]. */
  async logits(hidden: Float32Array): Promise<Float32Array> {
    this.alive();
    const head = this.p.head;
    if (!head) throw new EngineUsageError(`this engine (layers [${this.range}]) holds no head (final norm + lm_head)`);
    const H = this.config.hiddenSize;
    if (hidden.length === 0 || hidden.length % H !== 0) throw new EngineUsageError(`logits: hidden has ${hidden.length} values, not rows of ${H}`);
    const k = this.p.kernels;
    return k.frame(() => {
      const xp = k.input(hidden.subarray(hidden.length - H));
      k.rmsnormAt(xp, head.norm, xp, 1, H, this.config.rmsNormEps);
      const V = head.weight.rows;
      const yp = k.alloc(V * 4);
      k.linearAt(head.weight, xp, 1, yp, V);
      return k.f32(yp, V).slice();
    });
  }

  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    this.alive();
    return decodeRows(this, request);
  }

  async sampleAndRun(hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
    this.alive();
    return sampleThenRun(this, hidden, row, range);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.p.cache.truncate(0);
    this.p.state.clear();
    this.p.kernels.close();
  }

  private alive(): void {
    if (this.disposed) throw new EngineUsageError('this CPU engine was disposed');
  }

  private checkContinues(layer: number, start: number, n: number): void {
    const length = this.layerKvLength(layer);
    if (start !== length) throw new PositionError(`layer ${layer}: position ${start} does not continue its KV cache of ${length} tokens (expected ${length})`);
    if (length + n > this.p.cache.capacity) throw new ContextFullError(`layer ${layer}: ${length} + ${n} tokens exceed the context of ${this.p.cache.capacity}`);
  }
}
