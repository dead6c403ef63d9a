// How much of the context the conversation may use (docs/agent.md, Context and compaction).
// The space kept for the next answer is the answer cap or a quarter of the context, whichever is
// smaller, plus 64 tokens: 8,192 -> 6,080; 16,384 -> 12,224; 32,768 -> 24,512.
import { ANSWER_CAP, ANSWER_MARGIN, COMPACT_TARGET } from './limits.ts';

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
