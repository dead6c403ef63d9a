// Named errors of running a model, shared by every LayerEngine (CPU reference, WebGPU, a worker, the room's
// remote devices), the sampler and the Generator, so callers handle them one way whatever runs the layers.
// `code` survives structured cloning across a worker or a peer, where the class itself does not.

/** Base class: an engine was asked to do something it cannot. */
export class EngineError extends Error {
  override name = 'EngineError';
  readonly code: string = 'engine';
}

/** The KV cache has no room for the tokens asked for (context size `ctx` reached). */
export class ContextFullError extends EngineError {
  override name = 'ContextFullError';
  override readonly code = 'context-full';
}

/** A start position that does not continue the KV cache, or a layer range the engine does not hold. */
export class PositionError extends EngineError {
  override name = 'PositionError';
  override readonly code = 'bad-position';
}

/** A part the call needs is not on this engine (embedding, head, a layer) or shapes disagree. */
export class EngineUsageError extends EngineError {
  override name = 'EngineUsageError';
  override readonly code = 'engine-usage';
}

/** A token constraint allows no token at all, or sampling options are impossible. */
export class SamplingError extends EngineError {
  override name = 'SamplingError';
  override readonly code = 'sampling';
}

/** The room's stages do not cover the model's layers in order, or the host engine lacks embedding / head. */
export class PipelineError extends EngineError {
  override name = 'PipelineError';
  override readonly code = 'pipeline';
}

/** truncate() to a position where a recurrent layer has no snapshot (so its state cannot be restored). */
export class SnapshotMissingError extends EngineError {
  override name = 'SnapshotMissingError';
  override readonly code = 'snapshot-missing';
}

/** More recurrent-state snapshots than the engine keeps (each one costs the state of every linear layer). */
export class SnapshotLimitError extends EngineError {
  override name = 'SnapshotLimitError';
  override readonly code = 'snapshot-limit';
}

/** A draft model for speculative decoding whose vocabulary is not the target's (size or special-token ids). */
export class DraftVocabularyError extends EngineError {
  override name = 'DraftVocabularyError';
  override readonly code = 'draft-vocabulary';
}
