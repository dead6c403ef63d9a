// Loading a draft model in the app (the room panel's "Draft model" field, ?draft=): a small model of the
// target's tokenizer, whole, on the host's engine kind (WebGPU where the host has it), with its own KV
// cache. The order keeps a wrong choice cheap: resolve the source, read its config and tokenizer and
// check the vocabulary against the target's (DraftVocabularyError names each difference) before a
// single weight byte is read; then the plan's bytes (weights + KV) are known and shown while loading.
import { loadModelConfig } from '../model/config.ts';
import { EngineUsageError } from '../model/engine-errors.ts';
import { loadWeights, planWeights } from '../model/load-weights.ts';
import { resolveModelSource } from '../model/sources/resolve.ts';
import { DraftModelDrafter } from '../model/speculative/draft-model.ts';
import { DEFAULT_MAX_DRAFT } from '../model/speculative/types.ts';
import { checkSameVocabulary, vocabularyOf, type Vocabulary } from '../model/speculative/vocabulary.ts';
import { Tokenizer } from '../model/tokenizer.ts';
import type { ModelSource, WeightRequest } from '../model/types.ts';
import type { EngineKind, EngineOptions } from '../engines/contract.ts';
import { ENGINES } from '../engines/table.ts';
import { kvBytesPerLayer } from '../room/deal.ts';
import { CachingSource, IndexedDbByteStore } from '../room/weight-cache.ts';
import { hostModelUrl, modelName, modelUrlFor } from './models.ts';

/** A draft model ready to draft: the drafter (which owns the engine), its short name and what it holds. */
export interface LoadedDraft {
  drafter: DraftModelDrafter;
  name: string;
  /** Bytes it holds on the host: its weights plus its KV cache at the draft context. */
  bytes: number;
}

/** Loads the draft model of a choice; reports each step in words; `signal` abandons it between reads. */
export type DraftLoader = (choice: string, onStep: (step: string) => void, signal: AbortSignal) => Promise<LoadedDraft>;

export interface DraftTarget {
  /** The target's vocabulary (config rows, tokenizer ids, special ids): the draft must match it. */
  vocabulary: Vocabulary;
  /** The room's context: the draft's cache holds it and a draft's worth more (capped by the draft's own limit). */
  ctx: number;
  engine: EngineKind;
  /** The engine's options (?simd=…), as the room's engine was given them. */
  engineOptions?: EngineOptions;
  /** Where "tiny" and "/path" choices resolve (location.origin in the app). */
  origin: string;
}

/** The app's draft loader for a room's target: a choice as the model picker takes it, read through the weight cache. */
export function draftLoaderFor(target: DraftTarget): DraftLoader {
  return async (choice, onStep, signal) => {
    const name = modelName(choice.trim());
    onStep(`finding ${name}…`);
    const url = await hostModelUrl(modelUrlFor(choice, target.origin));
    const source = new CachingSource(await resolveModelSource(url), new IndexedDbByteStore(), url);
    return loadDraftFrom(source, name, target, onStep, signal);
  };
}

/** Check `source`'s vocabulary against the target's, then load it whole on the target's engine kind. */
export async function loadDraftFrom(source: ModelSource, name: string, target: Omit<DraftTarget, 'origin'>, onStep: (step: string) => void, signal: AbortSignal): Promise<LoadedDraft> {
  onStep(`checking ${name}'s tokenizer…`);
  const config = await loadModelConfig(source);
  const vocabulary = { target: target.vocabulary, draft: vocabularyOf(config, await Tokenizer.fromSource(source)) };
  checkSameVocabulary(vocabulary.target, vocabulary.draft, `draft model ${name}`);
  if (config.hybrid) throw new EngineUsageError(`draft model ${name}: a hybrid model (recurrent layers) cannot be a draft model; take an attention-only one such as Qwen3-0.6B`);
  signal.throwIfAborted();
  const ctx = Math.min(config.maxPositionEmbeddings, target.ctx + DEFAULT_MAX_DRAFT + 1);
  const request: WeightRequest = { layers: [0, config.numLayers], embedding: true, head: true, signal };
  const plan = await planWeights(source, request);
  const bytes = plan.dataBytes + config.numLayers * kvBytesPerLayer(config, ctx);
  const size = formatBytes(bytes);
  onStep(`loading ${name} (${size})…`);
  const weights = await loadWeights(source, {
    ...request, onProgress: (p) => onStep(`loading ${name} (${size})… ${Math.floor((100 * p.bytesDone) / Math.max(1, p.bytesTotal))}%`),
  });
  signal.throwIfAborted();
  onStep(`starting ${name} on this device…`);
  const row = ENGINES[target.engine];
  if (!row) throw new EngineUsageError(`draft model ${name}: no engine "${target.engine}" on this page`);
  const engine = await row.createEngine(target.engineOptions ?? {})(weights, { ctx, range: [0, config.numLayers] });
  try {
    signal.throwIfAborted();
    // It drafts as many tokens a pass as its measurements say pay (at most the pass's max): the room's
    // pass time and the draft's token time differ from device to device, and so does its agreement.
    return { drafter: new DraftModelDrafter(engine, { ctx, vocabulary, label: name, draftLength: 'auto' }), name, bytes };
  } catch (e) {
    await engine.dispose();
    throw e;
  }
}

/** "0.41 GB", "23 MB": a size as the panel shows it. */
export function formatBytes(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${Math.max(1, Math.round(bytes / 1e6))} MB`;
}
