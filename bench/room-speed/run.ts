// `npm run bench -- --room`: is a room faster than its fastest device? The real RoomEngine, Generator,
// speculative decoding and prompt lookup run over modelled devices (modelled.ts: a stated profile,
// default the layers of Qwen3-8B Q4 at 100 GB/s, on a virtual clock) joined by links with a one-way
// delay per frame (0 / 2 / 5 / 10 ms). Decoding is timed on the agent corpus (corpus.ts: the replay
// scripts and the eval suite's scripted solutions, replayed as the target's output); exactness is checked
// on real reference engines on a tiny model through the same rooms. Writes bench-results/room.json.
import { Generator } from '../../src/model/generator.ts';
import type { LayerEngine, LayerRange } from '../../src/model/engine-types.ts';
import { ReferenceEngine } from '../../src/model/reference/reference-engine.ts';
import { PromptLookupDrafter } from '../../src/model/speculative/prompt-lookup.ts';
import type { Drafter } from '../../src/model/speculative/types.ts';
import { RoomEngine } from '../../src/room/room-engine.ts';
import { syntheticWeights, weightsSubset } from '../../test/unit/model/reference/synthetic-model.ts';
import { agentCorpus, lookupOnAnswer, type CorpusAnswer } from './corpus.ts';
import { draftModelFigures } from './draft.ts';
import { Meter, ModelledChain, ModelledDevice, QWEN3_8B_Q4_100GBS, VirtualClock, type DeviceProfile, type TimeBreakdown } from './modelled.ts';
import { OracleDrafter, type OracleKind } from './oracle.ts';
import { ScriptTarget, type Script } from './target.ts';

export const title = 'room speed: modelled devices (Qwen3-8B Q4 layers at 100 GB/s) over delayed links, the agent corpus';

const DELAYS = [0, 2, 5, 10] as const;
const STATED_DELAY = 5;
const MAX_DRAFT = 7;
const PREFILL_TOKENS = 512;

/** How the layers are spread: 'single', 2 devices, or 3 as a chain (host → A → B → host) or a star (each guest answers the host). */
type Layout = 'single' | 'split2' | 'chain3' | 'star3';

/** [0, L) in n nearly equal consecutive ranges. */
function ranges(L: number, n: number): LayerRange[] {
  return Array.from({ length: n }, (_, i) => [Math.round((i * L) / n), Math.round(((i + 1) * L) / n)] as LayerRange);
}

interface Room { engine: RoomEngine; host: ModelledDevice; meter: Meter }

/** A room of modelled devices; inner(range, io) makes each device's numbers. */
export function buildRoom(layout: Layout, delayMs: number, profile: DeviceProfile, L: number, hiddenSize: number, inner: (range: LayerRange, io: boolean) => LayerEngine, microChunk?: number | 'auto'): Room {
  const clock = new VirtualClock();
  const meter = new Meter(clock, profile);
  const device = (range: LayerRange, io: boolean) => new ModelledDevice(inner(range, io), meter, hiddenSize);
  const opts = { numLayers: L, hiddenSize, now: () => clock.now, ...(microChunk === undefined ? {} : { microChunk }) };
  if (layout === 'single') {
    const only = device([0, L], true);
    return { engine: new RoomEngine(only, [only], opts), host: only, meter };
  }
  const parts = ranges(L, layout === 'split2' ? 2 : 3);
  const host = device(parts[0]!, true);
  const guests = parts.slice(1).map((r) => device(r, false));
  const stages: LayerEngine[] = layout === 'star3'
    ? guests.map((g) => new ModelledChain([g], meter, delayMs))
    : [new ModelledChain(guests, meter, delayMs)];
  return { engine: new RoomEngine(host, [host, ...stages], opts), host, meter };
}

interface DecodeFigures {
  tokensPerSecond: number; hopsPerToken: number; readbacksPerToken: number; passes: number; accepted: number; tokens: number;
  /** Modelled ms per decode step (a pass, or a plain step), by where it went. */
  msPerPass: TimeBreakdown;
  /** Hidden rows per frame (1 + drafted tokens, for a pass). */
  rowsPerHop: number;
}

/** A drafter for one decode run; it may read the script (the oracles do). */
type DrafterFor = (script: Script) => Drafter;

/** Decode the corpus answers (each answer's prompt first, untimed), timing from the first token on. */
export async function decodeCorpus(corpus: CorpusAnswer[], layout: Layout, delayMs: number, lookup: boolean, profile: DeviceProfile, drafterFor: DrafterFor = () => new PromptLookupDrafter()): Promise<DecodeFigures> {
  const script: Script = { tokens: [] };
  const room = buildRoom(layout, delayMs, profile, profile.layers, 1, (range, io) => new ScriptTarget(script, range, io));
  const generator = new Generator(room.engine, { ctx: 1 << 16 });
  const drafter = drafterFor(script);
  let ms = 0, tokens = 0, hops = 0, readbacks = 0, passes = 0, accepted = 0, rows = 0;
  const spent: TimeBreakdown = { hostLayers: 0, guestLayers: 0, head: 0, readbacks: 0, hopDelay: 0, hopBytes: 0 };
  for (const a of corpus) {
    if (a.answer.length < 2) continue;
    script.tokens = [...a.prompt, ...a.answer];
    let mark: { at: number; hops: number; readbacks: number; rows: number; time: TimeBreakdown } | undefined;
    const r = await generator.generate(a.prompt, {
      maxNewTokens: a.answer.length,
      ...(a.constraint ? { constraint: a.constraint() } : {}),
      onToken: (_id, soFar) => { if (soFar.length === 1) mark = { at: room.meter.clock.now, hops: room.meter.hops, readbacks: room.host.readbacks, rows: room.meter.rowsSent, time: { ...room.meter.time } }; },
      ...(lookup ? { speculate: { drafter, maxDraft: MAX_DRAFT } } : {}),
    });
    if (r.finish === 'error') throw r.error;
    if (r.ids.join() !== a.answer.join()) throw new Error(`${a.source}: the room's answer is not the corpus answer`);
    ms += room.meter.clock.now - mark!.at;
    tokens += r.ids.length - 1;
    hops += room.meter.hops - mark!.hops;
    readbacks += room.host.readbacks - mark!.readbacks;
    rows += room.meter.rowsSent - mark!.rows;
    for (const k of Object.keys(spent) as (keyof TimeBreakdown)[]) spent[k] += room.meter.time[k] - mark!.time[k];
    passes += r.stats.passes ?? r.ids.length - 1;
    accepted += r.stats.accepted ?? 0;
  }
  const steps = lookup ? passes : tokens;
  const msPerPass = Object.fromEntries(Object.entries(spent).map(([k, v]) => [k, v / steps])) as unknown as TimeBreakdown;
  return { tokensPerSecond: tokens / (ms / 1000), hopsPerToken: hops / tokens, readbacksPerToken: readbacks / tokens, passes, accepted, tokens, msPerPass, rowsPerHop: hops > 0 ? rows / hops : 0 };
}

/** Seconds to the first token of a fresh PREFILL_TOKENS prompt (after two warm-up prompts: 'auto' measures two chunk sizes). */
async function prefill(layout: Layout, delayMs: number, microChunk: number | 'auto', profile: DeviceProfile): Promise<{ seconds: number; chunk: number }> {
  const script: Script = { tokens: [] };
  const room = buildRoom(layout, delayMs, profile, profile.layers, 1, (range, io) => new ScriptTarget(script, range, io), microChunk);
  const prompt = (first: number) => [first, ...Array.from({ length: PREFILL_TOKENS - 1 }, (_, i) => 2000 + ((i * 104729) % 9000))];
  for (const first of [10, 11]) {
    script.tokens = [...prompt(first), 0];
    await new Generator(room.engine, { ctx: 4096 }).generate(prompt(first), { maxNewTokens: 1 });
    await room.engine.truncate(0);
  }
  script.tokens = [...prompt(12), 0];
  const chunk = room.engine.chunkFor(PREFILL_TOKENS);
  const t0 = room.meter.clock.now;
  const r = await new Generator(room.engine, { ctx: 4096 }).generate(prompt(12), { maxNewTokens: 1 });
  if (r.stats.promptComputed !== PREFILL_TOKENS) throw new Error('prefill reused cached tokens');
  return { seconds: (room.meter.clock.now - t0) / 1000, chunk };
}

/** The same rooms over real reference engines on a tiny model: every layout and mode gives one device's tokens. */
async function exactness(profile: DeviceProfile): Promise<string> {
  const weights = syntheticWeights({ layers: 6, seed: 11 });
  const { hiddenSize, numLayers } = weights.config;
  const ctx = 256;
  const inner = (range: LayerRange, io: boolean): LayerEngine =>
    new ReferenceEngine(weightsSubset(weights, range[0], range[1], { embedding: io, head: io }), { ctx, range });
  const base = [1, 9, 4, 22, 61, 7, 7, 30, 2, 15, 80, 33];
  const prompt = [...base, 40, 41, 3, ...base.slice(0, 7), 90, 11, ...base, ...Array.from({ length: 40 }, (_, i) => (i * 37) % 200)];
  const expected = (await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(prompt, { maxNewTokens: 40 })).ids;
  const checked: string[] = [];
  for (const layout of ['single', 'split2', 'chain3', 'star3'] as const) {
    for (const microChunk of [0, 4, 'auto'] as const) {
      for (const lookup of [false, true]) {
        const room = buildRoom(layout, 2, profile, numLayers, hiddenSize, inner, microChunk);
        const r = await new Generator(room.engine, { ctx }).generate(prompt, { maxNewTokens: 40, ...(lookup ? { speculate: { drafter: new PromptLookupDrafter() } } : {}) });
        if (r.ids.join() !== expected.join()) throw new Error(`${layout}, micro-chunk ${microChunk}, ${lookup ? 'lookup' : 'plain'}: tokens differ from one device's`);
      }
    }
    checked.push(layout);
  }
  return `identical tokens: ${checked.join(', ')} × micro-chunk 0/4/auto × plain/lookup (reference engines, 6-layer tiny model)`;
}

export async function run(profile: DeviceProfile = QWEN3_8B_Q4_100GBS): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = { profile: profile.name, statedDelayMs: STATED_DELAY };
  figures.exactness = await exactness(profile);

  const corpus = await agentCorpus();
  figures.corpusAnswers = corpus.length;
  figures.corpusTokens = corpus.reduce((s, a) => s + a.answer.length, 0);
  const replay = (drafter: (a: CorpusAnswer) => Drafter, answers: readonly CorpusAnswer[] = corpus) => {
    let passes = 0, accepted = 0, drafted = 0;
    const kept = new Array<number>(MAX_DRAFT + 1).fill(0);
    for (const a of answers) {
      if (a.answer.length < 2) continue;
      const r = lookupOnAnswer(a, MAX_DRAFT, drafter(a));
      passes += r.passes; accepted += r.accepted; drafted += r.drafted;
      for (const k of r.perPass) kept[k]!++;
    }
    return { acceptance: accepted / passes, draftedPerPass: drafted / passes, kept: kept.map((n, k) => `${k}:${n}`).join(' ') };
  };
  const lookup = replay(() => new PromptLookupDrafter());
  figures.lookupAcceptance = lookup.acceptance;
  figures.lookupDraftedPerPass = lookup.draftedPerPass;
  figures.lookupKeptPerPass = lookup.kept;      // passes by drafted tokens kept (0 … MAX_DRAFT)
  const oracle = (kind: OracleKind) => (a: CorpusAnswer) => new OracleDrafter({ tokens: [...a.prompt, ...a.answer] }, kind);
  for (const kind of ['anchored', 'anywhere'] as const) {
    const r = replay(oracle(kind));
    figures[`oracle${kind === 'anchored' ? 'Anchored' : 'Anywhere'}Acceptance`] = r.acceptance;
    figures[`oracle${kind === 'anchored' ? 'Anchored' : 'Anywhere'}KeptPerPass`] = r.kept;
  }

  const single = await decodeCorpus(corpus, 'single', 0, false, profile);
  const singleLookup = await decodeCorpus(corpus, 'single', 0, true, profile);
  figures.singleTokensPerSecond = single.tokensPerSecond;
  figures.singleLookupOverSingle = singleLookup.tokensPerSecond / single.tokensPerSecond;
  const singlePrefill = await prefill('single', 0, 0, profile);

  for (const d of DELAYS) {
    const suffix = d === STATED_DELAY ? '' : `@${d}ms`;
    const plain = await decodeCorpus(corpus, 'split2', d, false, profile);
    const lookup = await decodeCorpus(corpus, 'split2', d, true, profile);
    const chain = await decodeCorpus(corpus, 'chain3', d, false, profile);
    const chainLookup = await decodeCorpus(corpus, 'chain3', d, true, profile);
    const star = await decodeCorpus(corpus, 'star3', d, false, profile);
    const anchored = await decodeCorpus(corpus, 'split2', d, true, profile, (script) => new OracleDrafter(script, 'anchored'));
    const anywhere = await decodeCorpus(corpus, 'split2', d, true, profile, (script) => new OracleDrafter(script, 'anywhere'));
    const piped = await prefill('split2', d, 'auto', profile);
    const whole = await prefill('split2', d, 0, profile);
    Object.assign(figures, {
      [`splitPlainOverSingle${suffix}`]: plain.tokensPerSecond / single.tokensPerSecond,
      [`splitLookupOverSingle${suffix}`]: lookup.tokensPerSecond / single.tokensPerSecond,
      [`splitLookupAcceptance${suffix}`]: lookup.accepted / lookup.passes,
      [`splitOracleAnchoredOverSingle${suffix}`]: anchored.tokensPerSecond / single.tokensPerSecond,
      [`splitOracleAnywhereOverSingle${suffix}`]: anywhere.tokensPerSecond / single.tokensPerSecond,
      [`hopsPerToken${suffix}`]: plain.hopsPerToken,
      [`hopsPerToken3DevicesChain${suffix}`]: chain.hopsPerToken,
      [`hopsPerToken3DevicesStar${suffix}`]: star.hopsPerToken,
      [`chain3PlainOverSingle${suffix}`]: chain.tokensPerSecond / single.tokensPerSecond,
      [`chain3LookupOverSingle${suffix}`]: chainLookup.tokensPerSecond / single.tokensPerSecond,
      [`hostReadbacksPerToken${suffix}`]: plain.readbacksPerToken,
      [`hostReadbacksPerTokenLookup${suffix}`]: lookup.readbacksPerToken,
      [`pipelinedPrefillOverPlain${suffix}`]: whole.seconds / piped.seconds,
      [`pipelinedPrefillOverSingle${suffix}`]: singlePrefill.seconds / piped.seconds,
      [`prefillChunk${suffix}`]: piped.chunk,
    });
    if (d === STATED_DELAY) {
      // Where a decode step's time goes (ms per pass with lookup, per token plain), and the rows a frame carries.
      for (const [name, f] of [['splitPlain', plain], ['splitLookup', lookup]] as const) {
        for (const [k, v] of Object.entries(f.msPerPass)) figures[`${name}MsPerStep.${k}`] = v;
        figures[`${name}MsPerStep`] = Object.values(f.msPerPass).reduce((a, b) => a + b, 0);
        figures[`${name}RowsPerHop`] = f.rowsPerHop;
      }
    }
  }
  // The stated configuration on each part of the corpus: apps built from nothing, and follow-ups.
  for (const kind of ['build', 'follow-up'] as const) {
    const part = corpus.filter((a) => a.kind === kind);
    const tag = kind === 'build' ? 'Builds' : 'FollowUps';
    if (part.length === 0) throw new Error(`the corpus has no ${kind} answers`);
    const alone = await decodeCorpus(part, 'single', 0, false, profile);
    const split = await decodeCorpus(part, 'split2', STATED_DELAY, true, profile);
    Object.assign(figures, {
      [`corpusAnswers${tag}`]: part.length,
      [`corpusTokens${tag}`]: part.reduce((n, a) => n + a.answer.length, 0),
      [`lookupAcceptance${tag}`]: replay(() => new PromptLookupDrafter(), part).acceptance,
      [`splitLookupOverSingle${tag}`]: split.tokensPerSecond / alone.tokensPerSecond,
    });
  }
  // Split + draft model (draft.ts): a modelled Qwen3-0.6B on the host, its agreement modelled, not measured.
  Object.assign(figures, await draftModelFigures(corpus, single.tokensPerSecond, profile));
  return figures;
}
