// The room bench's "split + draft model" rows: the real DraftModelDrafter, Generator and RoomEngine over
// modelled devices (modelled.ts), the draft model a modelled device of its own on the host.
//
// - Its time: the Qwen3-0.6B Q4 profile (28 layers of 8.8 MB, a 151936 × 1024 head, 100 GB/s), on the
//   room's virtual clock. It runs before each pass, one token after another (the host is busy drafting,
//   then verifies): k drafted tokens cost about k × 3.5 ms before the pass's 43 ms + hops.
// - Its guesses: without the real weights, a draft model's agreement with the target on the corpus cannot
//   be measured, so it is MODELLED: the draft's token at each position is the target's (the corpus
//   answer's) with probability α, drawn pseudo-randomly per position from a fixed seed, else another
//   token. The figures say "modelledAgreement" in their names; they are not measured acceptance.
// - Exactness: the same rooms over reference engines on a tiny model, with a tiny draft model of the
//   same vocabulary, give one device's tokens.
import type { DecodeRequest, LayerEngine, LayerRange, RowCandidates, TokenConstraint } from '../../src/model/engine-types.ts';
import { PositionError } from '../../src/model/engine-errors.ts';
import { Generator } from '../../src/model/generator.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { isAllowed, tokenSeed } from '../../src/model/sampler.ts';
import { DraftModelDrafter } from '../../src/model/speculative/draft-model.ts';
import { vocabularyOf } from '../../src/model/speculative/vocabulary.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import { syntheticWeights, weightsSubset } from '../../test/unit/model/reference/synthetic-model.ts';
import type { CorpusAnswer } from './corpus.ts';
import { Meter, ModelledChain, ModelledDevice, VirtualClock, type DeviceProfile } from './modelled.ts';
import { ScriptTarget, type Script } from './target.ts';

/** The agreements the rows are given for (a real 0.6B draft of an 8B target is usually quoted in this range). */
export const MODELLED_AGREEMENTS = [0.5, 0.6, 0.7, 0.8] as const;
/** Fixed seed of the per-position agreement draws. */
export const AGREEMENT_SEED = 0x5eed0a11;
const STATED_DELAY = 5;
/** The fixed draft lengths the adaptive one is compared with (the best of them is reported). */
const MAX_DRAFTS = [1, 2, 3, 4, 5, 6, 7] as const;
const DEFAULT_MAX_DRAFT = 7;

// Qwen3-0.6B: hidden 1024, intermediate 3072, 28 layers, 16 query / 8 KV heads of 128, tied 151936-row
// embedding. Per layer q 1024·2048, o 2048·1024, k, v 1024·1024 each, gate, up, down 1024·3072 each:
// 15.7 M weights, at 4.5 bits 8.85 MB; the head 151936·1024 weights (87.5 MB).
const Q4_BYTES_PER_WEIGHT = 4.5 / 8;
export const QWEN3_06B_Q4_100GBS: DeviceProfile = {
  name: 'Qwen3-0.6B Q4 layers at 100 GB/s (the draft model, on the host)',
  layers: 28,
  layerBytes: (2 * 1024 * 2048 + 2 * 1024 * 1024 + 3 * 1024 * 3072) * Q4_BYTES_PER_WEIGHT,
  headBytes: 151936 * 1024 * Q4_BYTES_PER_WEIGHT,
  bandwidth: 100e9,
  freeRows: 8,
  readbackMs: 0.2,
  wireBytesPerRow: 1024 * 4,
  linkBytesPerSecond: 50e6,
};

/** The script the draft follows: the target's tokens, and a salt per answer for its agreement draws. */
export interface DraftScript extends Script { salt: number; agreement: number }

/** Does the modelled draft agree with the target on the token after `position`? Pseudo-random, fixed per (answer, position). */
export function agrees(script: DraftScript, position: number): boolean {
  return tokenSeed((AGREEMENT_SEED ^ Math.imul(script.salt + 1, 0x9e3779b9)) >>> 0, position) / 2 ** 32 < script.agreement;
}

/**
 * The modelled draft model's numbers: a whole model (embedding, layers, head) whose hidden rows are their
 * positions (as ScriptTarget's) and whose greedy pick after position p is the script's token there when
 * it agrees, else another token (one id up). Its cache is a length, so truncation is real.
 */
class ScriptDraft implements LayerEngine {
  readonly range: LayerRange;
  readonly hasEmbedding = true;
  readonly hasHead = true;
  readonly recurrent = false;
  private kv = 0;

  constructor(private readonly script: DraftScript, layers: number) { this.range = [0, layers]; }

  kvLength(): number { return this.kv; }
  async truncate(length: number): Promise<void> { this.kv = Math.min(this.kv, length); }
  async snapshot(): Promise<void> {}
  async releaseSnapshot(): Promise<void> {}
  async embed(ids: number[]): Promise<Float32Array> { return new Float32Array(ids.length); }
  async runLayers(_range: LayerRange, start: number, hidden: Float32Array): Promise<Float32Array> {
    if (start !== this.kv) throw new PositionError(`script draft: position ${start} does not continue the cache of ${this.kv}`);
    this.kv += hidden.length;
    return Float32Array.from(hidden, (_, i) => start + i);
  }
  private pick(position: number, constraint?: TokenConstraint): number {
    const target = this.script.tokens[position + 1] ?? 0;
    const guess = agrees(this.script, position) ? target : target + 1;
    return isAllowed(constraint, guess) ? guess : target;
  }
  async decode(request: DecodeRequest): Promise<RowCandidates[]> {
    const hidden = request.tokens ? await this.runLayers(this.range, this.kv, await this.embed([...request.tokens])) : request.hidden!;
    const at = hidden.length - request.rows.length;
    return request.rows.map((r, i) => ({ ids: [this.pick(hidden[at + i]!, r.constraint)], logits: [0] }));
  }
  async dispose(): Promise<void> { this.kv = 0; }
}

type Layout = 'single' | 'split2' | 'chain3';

/** One device, or the layers in 2 or 3 nearly equal parts (host first, the guests chained), on one clock. */
function roomOf(layout: Layout, delayMs: number, profile: DeviceProfile, L: number, hiddenSize: number, inner: (range: LayerRange, io: boolean) => LayerEngine) {
  const clock = new VirtualClock();
  const meter = new Meter(clock, profile);
  const opts = { numLayers: L, hiddenSize, now: () => clock.now };
  const device = (range: LayerRange, io: boolean) => new ModelledDevice(inner(range, io), meter, hiddenSize);
  if (layout === 'single') {
    const only = device([0, L], true);
    return { engine: new RoomEngine(only, [only], opts), clock };
  }
  const n = layout === 'split2' ? 2 : 3;
  const cuts = Array.from({ length: n + 1 }, (_, i) => Math.round((i * L) / n));
  const host = device([0, cuts[1]!], true);
  const guests = cuts.slice(1, -1).map((c, i) => device([c, cuts[i + 2]!], false));
  return { engine: new RoomEngine(host, [host, new ModelledChain(guests, meter, delayMs)], opts), clock };
}

interface DraftDecode { tokensPerSecond: number; acceptance: number; draftMsPerPass: number; draftedPerPass: number }

/**
 * Decode the corpus with the modelled draft model drafting `length` tokens a pass ('auto': chosen by the
 * drafter from what it measures, at most the default 7), timed from each answer's first token. One
 * drafter follows the whole corpus, as the app's follows a conversation.
 */
async function decodeWithDraft(corpus: CorpusAnswer[], layout: Layout, delayMs: number, agreement: number, length: number | 'auto', profile: DeviceProfile): Promise<DraftDecode> {
  const script: DraftScript = { tokens: [], salt: 0, agreement };
  const room = roomOf(layout, delayMs, profile, profile.layers, 1, (range, io) => new ScriptTarget(script, range, io));
  const draftDevice = new ModelledDevice(new ScriptDraft(script, QWEN3_06B_Q4_100GBS.layers), new Meter(room.clock, QWEN3_06B_Q4_100GBS), 1);
  const vocabulary = { target: vocabularyOf({ vocabSize: 151936 }), draft: vocabularyOf({ vocabSize: 151936 }) };
  // The drafter times itself and the passes on the room's virtual clock.
  const drafter = new DraftModelDrafter(draftDevice, { ctx: 1 << 16, vocabulary, label: 'Qwen3-0.6B (modelled)', draftLength: length, now: () => room.clock.now });
  const maxDraft = length === 'auto' ? DEFAULT_MAX_DRAFT : length;
  // The draft's time, apart: the Generator awaits the drafter before each pass.
  const timed = { name: drafter.name, draftMs: 0, draft: async (r: Parameters<DraftModelDrafter['draft']>[0]) => {
    const t0 = room.clock.now;
    const d = await drafter.draft(r);
    timed.draftMs += room.clock.now - t0;
    return d;
  } };
  const generator = new Generator(room.engine, { ctx: 1 << 16 });
  let ms = 0, tokens = 0, passes = 0, accepted = 0, drafted = 0, draftMs = 0;
  for (const [i, a] of corpus.entries()) {
    if (a.answer.length < 2) continue;
    Object.assign(script, { tokens: [...a.prompt, ...a.answer], salt: i });
    // The draft reads the prompt with the target's prefill (untimed, as the target's is): only its cache's
    // new tail, since it follows the conversation from answer to answer as the target's Generator does.
    await drafter.draft({ context: a.prompt, max: 1, sampling: { temperature: 0 }, seed: 0 });
    let at: number | undefined, draftAt = 0;
    const r = await generator.generate(a.prompt, {
      maxNewTokens: a.answer.length, speculate: { drafter: timed, maxDraft },
      onToken: (_id, soFar) => { if (soFar.length === 1) { at = room.clock.now; draftAt = timed.draftMs; } },
    });
    if (r.finish === 'error') throw r.error;
    if (r.ids.join() !== a.answer.join()) throw new Error(`${a.source}: the room's answer with a draft model is not the corpus answer`);
    ms += room.clock.now - at!;
    draftMs += timed.draftMs - draftAt;
    tokens += r.ids.length - 1;
    passes += r.stats.passes!;
    accepted += r.stats.accepted!;
    drafted += r.stats.drafted!;
  }
  if (drafter.failure) throw drafter.failure;
  return { tokensPerSecond: tokens / (ms / 1000), acceptance: accepted / passes, draftMsPerPass: draftMs / passes, draftedPerPass: drafted / passes };
}

/** Reference engines on a 6-layer tiny model, a 3-layer draft of its vocabulary: every layout gives one device's tokens. */
async function draftExactness(profile: DeviceProfile): Promise<string> {
  const weights = syntheticWeights({ layers: 6, seed: 11 });
  const draftWeights = { ...weightsSubset(weights, 0, 3, { embedding: true, head: true }), config: { ...weights.config, numLayers: 3 } };
  const { hiddenSize, numLayers } = weights.config;
  const ctx = 256;
  const inner = (range: LayerRange, io: boolean): LayerEngine =>
    new ReferenceEngine(weightsSubset(weights, range[0], range[1], { embedding: io, head: io }), { ctx, range });
  const prompt = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33, 40, 41, 3, 90, 11];
  const expected = (await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 40 })).ids;
  let accepted = 0;
  for (const layout of ['single', 'split2', 'chain3'] as const) {
    const room = roomOf(layout, 2, profile, numLayers, hiddenSize, inner);
    const drafter = new DraftModelDrafter(new ReferenceEngine(draftWeights, { ctx }), {
      ctx, vocabulary: { target: vocabularyOf(weights.config), draft: vocabularyOf(draftWeights.config) }, now: () => room.clock.now,
    });
    const r = await new Generator(room.engine, { ctx }).generate(prompt, { maxNewTokens: 40, speculate: { drafter } });
    if (r.ids.join() !== expected.join()) throw new Error(`${layout} with a draft model: tokens differ from one device's`);
    accepted += r.stats.accepted!;
  }
  return `identical tokens with a 3-layer draft model: single, split2, chain3 (reference engines, 6-layer tiny model; ${accepted} drafted tokens kept in all)`;
}

/**
 * The draft-model figures for room.json: at the stated configuration (5 ms, 2 devices) and each modelled
 * agreement α, split + draft over one device's plain decode with k = 7, with the best fixed k of 1 … 7,
 * and with k chosen by the drafter ('auto', its mean drafted tokens per pass beside it); the mean accepted
 * drafted tokens per pass, the draft's time per pass; one device with a draft model (k = 7, the best
 * fixed k, auto); 3 devices (k = 7 and auto).
 */
export async function draftModelFigures(corpus: CorpusAnswer[], singleTokensPerSecond: number, profile: DeviceProfile): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {
    draftModelProfile: `${QWEN3_06B_Q4_100GBS.name}: ${(((QWEN3_06B_Q4_100GBS.layers * QWEN3_06B_Q4_100GBS.layerBytes + QWEN3_06B_Q4_100GBS.headBytes) / QWEN3_06B_Q4_100GBS.bandwidth) * 1000).toFixed(2)} ms a drafted token, run before each pass`,
    draftModelAgreement: `modelled agreement, not measured: each drafted token is the target's with probability α (${MODELLED_AGREEMENTS.join(', ')}), pseudo-random per position from seed 0x${AGREEMENT_SEED.toString(16)}`,
    draftModelExactness: await draftExactness(profile),
  };
  const over = (d: DraftDecode) => d.tokensPerSecond / singleTokensPerSecond;
  for (const alpha of MODELLED_AGREEMENTS) {
    const tag = `@modelledAgreement${alpha}`;
    const fixedK = async (layout: Layout, delayMs: number) => {
      const runs = new Map<number, DraftDecode>();
      for (const k of MAX_DRAFTS) runs.set(k, await decodeWithDraft(corpus, layout, delayMs, alpha, k, profile));
      const [k, best] = [...runs].reduce((a, b) => (b[1].tokensPerSecond > a[1].tokensPerSecond ? b : a));
      return { k7: runs.get(DEFAULT_MAX_DRAFT)!, k, best };
    };
    const { k7: split, k: bestK, best } = await fixedK('split2', STATED_DELAY);
    const auto = await decodeWithDraft(corpus, 'split2', STATED_DELAY, alpha, 'auto', profile);
    const alone = await fixedK('single', 0);
    const single = alone.k7;
    const singleAuto = await decodeWithDraft(corpus, 'single', 0, alpha, 'auto', profile);
    const chain = await decodeWithDraft(corpus, 'chain3', STATED_DELAY, alpha, DEFAULT_MAX_DRAFT, profile);
    const chainAuto = await decodeWithDraft(corpus, 'chain3', STATED_DELAY, alpha, 'auto', profile);
    Object.assign(figures, {
      [`splitDraftOverSingle${tag}`]: over(split),
      [`splitDraftAcceptance${tag}`]: split.acceptance,
      [`splitDraftMsPerPass${tag}`]: split.draftMsPerPass,
      [`splitDraftBestMaxDraft${tag}`]: bestK,
      [`splitDraftBestOverSingle${tag}`]: over(best),
      [`splitDraftAutoOverSingle${tag}`]: over(auto),
      [`splitDraftAutoDraftedPerPass${tag}`]: auto.draftedPerPass,
      [`splitDraftAutoAcceptance${tag}`]: auto.acceptance,
      [`splitDraftAutoOverBest${tag}`]: auto.tokensPerSecond / best.tokensPerSecond,
      [`splitDraftAutoOverK7${tag}`]: auto.tokensPerSecond / split.tokensPerSecond,
      [`singleDraftOverSingle${tag}`]: over(single),
      [`singleDraftBestMaxDraft${tag}`]: alone.k,
      [`singleDraftBestOverSingle${tag}`]: over(alone.best),
      [`singleDraftAutoOverSingle${tag}`]: over(singleAuto),
      [`chain3DraftOverSingle${tag}`]: over(chain),
      [`chain3DraftAutoOverSingle${tag}`]: over(chainAuto),
    });
  }
  return figures;
}
