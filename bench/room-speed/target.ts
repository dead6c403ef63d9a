// The corpus target: a LayerEngine (one per device, each holding its layers) that answers the recorded
// corpus answer, as if the model's own greedy picks were those tokens. Hidden rows are one number, the
// row's position (written by the device holding layer 0, passed on by the others); the head gives the
// token after that position in `script.tokens` (prompt + answer). No weights: only the path and its time
// are real, the acceptance is the corpus's.
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates } from '../../src/model/engine-types.ts';
import { PositionError } from '../../src/model/engine-errors.ts';

export interface Script { tokens: number[] }

export class ScriptTarget implements LayerEngine {
  readonly hasEmbedding: boolean;
  readonly hasHead: boolean;
  readonly recurrent = false;
  private kv = 0;

  constructor(private readonly script: Script, readonly range: LayerRange, io: boolean) {
    this.hasEmbedding = io;
    this.hasHead = io;
  }

  kvLength(): number { return this.kv; }
  async truncate(length: number): Promise<void> { this.kv = Math.min(this.kv, length); }
  async snapshot(): Promise<void> {}
  async releaseSnapshot(): Promise<void> {}
  async embed(ids: number[]): Promise<Float32Array> { return Float32Array.from(ids); }

  async runLayers(range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    if (start !== this.kv) throw new PositionError(`script target: position ${start} does not continue the cache of ${this.kv}`);
    this.kv += hidden.length;
    return range[0] === 0 && range[1] > 0 ? Float32Array.from(hidden, (_, i) => start + i) : hidden.slice();
  }

  private next(position: number): number { return this.script.tokens[position + 1] ?? 0; }
  /** The fed tokens through the layers (or the prompt's row), then each row's one candidate: the script's next token. */
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    const hidden = request.tokens ? await this.runLayers(this.range, this.kv, await this.embed([...request.tokens])) : request.hidden!;
    const at = hidden.length - request.rows.length;   // rows are one number wide: the last rows.length
    return request.rows.map((_, i) => ({ ids: [this.next(hidden[at + i]!)], logits: [0] }));
  }
  async dispose(): Promise<void> { this.kv = 0; }
}
