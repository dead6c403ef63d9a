// The decode step of an engine with nothing to fuse (the reference and the WASM engine): feed the
// request's tokens (embed + every held layer) or take its hidden rows, then each row's candidates from
// its logits. An engine whose dispatches cost (WebGPU) fuses these steps instead.
import { checkDecode, type DecodeRequest, type LayerEngine, type LayerRange, type RowCandidates, type RowSampling } from './engine-types.ts';
import { pickRow, sortedCandidates } from './sampler.ts';
import type { ModelConfig } from './types.ts';

/** What the helpers use of an engine: LayerEngine's layer calls, its config and its head's logits of the last row. */
type PlainEngine = Pick<LayerEngine, 'range' | 'hasEmbedding' | 'hasHead' | 'kvLength' | 'embed' | 'runLayers'> & {
  readonly config: ModelConfig;
  logits(hidden: Float32Array): Promise<Float32Array>;   // [V] from the last of hidden's rows
};

/** `LayerEngine.decode` from the engine's embed, runLayers and logits; the request is checked first. */
export async function decodeRows(engine: PlainEngine, request: DecodeRequest): Promise<RowCandidates[]> {
  const H = engine.config.hiddenSize;
  const checked = checkDecode(request, H, { range: engine.range, hasEmbedding: engine.hasEmbedding, hasHead: engine.hasHead, numLayers: engine.config.numLayers });
  const hidden = request.tokens ? await engine.runLayers(engine.range, engine.kvLength(), await engine.embed([...request.tokens])) : checked.hidden!;
  const out: RowCandidates[] = [];
  for (const [i, r] of request.rows.entries()) out.push(sortedCandidates(await engine.logits(hidden.subarray(i * H, (i + 1) * H)), r.opts, r.constraint));
  return out;
}

/** `LayerEngine.sampleAndRun`: pick from the row's candidates, then embed the token and run `range` on it. */
export async function sampleThenRun(engine: PlainEngine, hidden: Float32Array, row: RowSampling, range: LayerRange): Promise<{ token: number; candidates: RowCandidates; hidden: Float32Array }> {
  const [candidates] = await decodeRows(engine, { hidden, rows: [row] });
  const token = pickRow(candidates!, row.opts, row.constraint);
  return { token, candidates: candidates!, hidden: await engine.runLayers(range, engine.kvLength(), await engine.embed([token])) };
}
