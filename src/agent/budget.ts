// How much of the context the conversation may use (docs/agent.md, Context and compaction).
// The space kept for the next answer is the answer cap or a quarter of the context, whichever is
// smaller, plus 64 tokens: 8,192 -> 6,080; 16,384 -> 12,224; 32,768 -> 24,512.
import type { ModelConfig } from '../model/types.ts';
import { ANSWER_CAP, ANSWER_MARGIN, COMPACT_TARGET, DEFAULT_CONTEXT, SMALL_MODEL_PARAMETERS } from './limits.ts';

export { ANSWER_CAP };

export function conversationBudget(contextSize: number, answerCap: number = ANSWER_CAP): number {
  return contextSize - (Math.min(answerCap, Math.floor(contextSize / 4)) + ANSWER_MARGIN);
}

export function compactionTarget(contextSize: number, answerCap: number = ANSWER_CAP): number {
  return Math.floor(conversationBudget(contextSize, answerCap) * COMPACT_TARGET);
}

/** The answer cap for one step: the cap, less when the context is nearly full. */
export function answerCapFor(promptTokens: number, contextSize: number, answerCap: number = ANSWER_CAP): number {
  return Math.max(0, Math.min(answerCap, contextSize - promptTokens));
}

/** A model's parameters from its shape: embedding (and an untied head) plus every layer's attention and MLP. */
export function parameterCount(c: ModelConfig): number {
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const attention = c.hiddenSize * q * 2 + c.hiddenSize * kv * 2;
  const mlp = 3 * c.hiddenSize * c.intermediateSize;
  const embedding = c.vocabSize * c.hiddenSize * (c.tieWordEmbeddings ? 1 : 2);
  return embedding + c.numLayers * (attention + mlp);
}

/**
 * The context a room gives the agent when ?ctx= does not say: 8,192 up to about 4B parameters, 16,384
 * for bigger dense models, 32,768 for mixture-of-experts models; never past what the model was trained for.
 */
export function defaultContextFor(config: ModelConfig): number {
  const wanted = (config.moe?.numExperts ?? 0) > 1 ? DEFAULT_CONTEXT.moe
    : parameterCount(config) <= SMALL_MODEL_PARAMETERS ? DEFAULT_CONTEXT.small : DEFAULT_CONTEXT.dense;
  return Math.min(wanted, config.maxPositionEmbeddings);
}
