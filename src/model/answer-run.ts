// One generate call's bookkeeping, apart from the Generator's decode loop: the answer's ids, its stats and
// clocks, letting the page run, and the result. The loop reads as its steps; the counting lives here.
import type { SamplingOptions } from './engine-types.ts';
import type { AcceptedTokens } from './decode-strategy.ts';
import type { FinishReason, GenerateOptions, GenerationResult, GenerationStats } from './generate-types.ts';

/** A CPU engine computes on the caller's thread: the loop lets the page run (paint, Stop) this often. */
const YIELD_EVERY_MS = 50;

export class AnswerRun {
  readonly ids: number[] = [];                // the answer so far (the stop token excluded)
  readonly sampling: SamplingOptions;
  readonly seed: number;
  readonly stats: GenerationStats;
  private readonly t0 = performance.now();
  private tFirst: number | undefined;         // when the first token was picked
  private decodeSteps = 0;                    // tokens emitted after the first
  private yieldedAt = this.t0;

  constructor(prompt: readonly number[], private readonly opts: GenerateOptions) {
    this.sampling = opts.sampling ?? { temperature: 0 };
    this.seed = this.sampling.seed ?? (this.sampling.temperature > 0 ? (Math.random() * 2 ** 32) >>> 0 : 0);
    this.stats = {
      promptTokens: prompt.length, promptComputed: 0, promptReused: 0, generated: 0, prefillSeconds: 0,
      decodeSeconds: 0, prefillTokensPerSecond: 0, decodeTokensPerSecond: 0, seconds: 0, seed: this.seed,
    };
  }

  /** Speculation asked for: its counters, the drafter's name, and why it is off when it is. */
  speculating(drafter: string, off: string | null): void {
    Object.assign(this.stats, { drafted: 0, accepted: 0, passes: 0, drafter }, off ? { speculationOff: off } : {});
  }

  /** A step came back: the first token's time, and with speculation asked for, a pass (every step after the first). */
  stepped(step: AcceptedTokens, fed: boolean): void {
    this.tFirst ??= performance.now();
    if (!fed || !this.opts.speculate) return;
    this.stats.drafted! += step.drafted;
    this.stats.accepted! += step.kept;
    this.stats.passes!++;
  }

  /** Tokens of a step that fed one emitted (they count as decode steps; the first token does not). */
  decoded(used: number): void {
    this.decodeSteps += used;
  }

  /** A turn of the event loop every YIELD_EVERY_MS. */
  async letThePageRun(): Promise<void> {
    if (performance.now() - this.yieldedAt < YIELD_EVERY_MS) return;
    await yieldToEventLoop();
    this.yieldedAt = performance.now();
  }

  finish(reason: FinishReason, extra: Partial<GenerationResult> = {}): GenerationResult {
    const now = performance.now(), stats = this.stats;
    stats.generated = this.ids.length;
    stats.seconds = (now - this.t0) / 1000;
    stats.prefillSeconds = ((this.tFirst ?? now) - this.t0) / 1000;
    stats.decodeSeconds = this.tFirst === undefined ? 0 : (now - this.tFirst) / 1000;
    stats.prefillTokensPerSecond = stats.prefillSeconds > 0 ? stats.promptComputed / stats.prefillSeconds : 0;
    stats.decodeTokensPerSecond = stats.decodeSeconds > 0 ? this.decodeSteps / stats.decodeSeconds : 0;
    return { ids: this.ids, finish: reason, stats, ...extra };
  }

  fail(e: unknown): GenerationResult {
    return this.finish('error', { error: e instanceof Error ? e : new Error(String(e)) });
  }
}

/**
 * One turn of the event loop: a message to ourselves is a task of its own, so input, timers and
 * painting get their turn before it (setTimeout would add its 4 ms clamp; scheduler.yield() runs
 * ahead of them and starves them).
 */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}
