// The host's drafter choice (src/app/draft-switch.ts, draft-loader.ts): prompt lookup by default; a draft
// model of the target's tokenizer loads whole (real tiny checkpoints, reference engine) and drafts; another
// vocabulary is refused by name before any weight is read and prompt lookup stays; engines are disposed
// when replaced, when the room closes, and not under an answer that is still drafting with them.
import { beforeAll, expect, test } from 'vitest';
import { loadDraftFrom, type DraftLoader, type LoadedDraft } from '../../../src/app/draft-loader.ts';
import { DraftSwitch, type DraftSwitchState } from '../../../src/app/draft-switch.ts';
import { loadModelConfig } from '../../../src/model/config.ts';
import { loadWeights } from '../../../src/model/load-weights.ts';
import { ReferenceEngine } from '../../../src/model/reference/reference-engine.ts';
import { Generator } from '../../../src/model/generator.ts';
import { NodeFolderSource } from '../../../src/model/sources/node-folder.ts';
import { DraftModelDrafter } from '../../../src/model/speculative/draft-model.ts';
import { PromptLookupDrafter } from '../../../src/model/speculative/prompt-lookup.ts';
import { vocabularyOf, type Vocabulary } from '../../../src/model/speculative/vocabulary.ts';
import { Tokenizer } from '../../../src/model/tokenizer.ts';
import type { ModelSource, ReadFileOptions } from '../../../src/model/types.ts';
import { tinyModelDir } from '../../helpers/tiny-model.ts';

const CTX = 128;
let dirs: Record<'target' | 'small' | 'otherVocab', string>;
let target: Vocabulary;

beforeAll(async () => {
  dirs = { target: await tinyModelDir(), small: await tinyModelDir({ layers: 2, seed: 9 }), otherVocab: await tinyModelDir({ vocab: 1000 }) };
  const source = new NodeFolderSource(dirs.target);
  target = vocabularyOf(await loadModelConfig(source), await Tokenizer.fromSource(source));
}, 120_000);

/** A source that counts the weight bytes read (safetensors files), to see the tokenizer is checked first. */
class CountingSource implements ModelSource {
  weightReads = 0;
  constructor(private readonly inner: ModelSource) {}
  get label() { return this.inner.label; }
  readFile(path: string, opts?: ReadFileOptions) { if (path.endsWith('.safetensors')) this.weightReads++; return this.inner.readFile(path, opts); }
  readRange(path: string, start: number, end: number) { if (path.endsWith('.safetensors') && end - start > 64 * 1024) this.weightReads++; return this.inner.readRange(path, start, end); }
  exists(path: string) { return this.inner.exists(path); }
}

interface Harness { sw: DraftSwitch; states: DraftSwitchState[]; sources: CountingSource[]; loaded: LoadedDraft[] }

/** A switch whose choices are tiny checkpoint names, loaded by the app's own loader on the reference engine. */
function harness(opts: { gate?: Promise<void> } = {}): Harness {
  const states: DraftSwitchState[] = [];
  const sources: CountingSource[] = [];
  const loaded: LoadedDraft[] = [];
  const loader: DraftLoader = async (choice, onStep, signal) => {
    const source = new CountingSource(new NodeFolderSource(dirs[choice as keyof typeof dirs] ?? `/nonexistent/pooled-${choice}`));
    sources.push(source);
    await opts.gate;
    const d = await loadDraftFrom(source, choice, { vocabulary: target, ctx: CTX, engine: 'reference' }, onStep, signal);
    const engine = d.drafter.engine;
    const dispose = engine.dispose.bind(engine);
    engine.dispose = async () => { disposedEngines.add(d); await dispose(); };
    loaded.push(d);
    return d;
  };
  return { sw: new DraftSwitch(loader, (s) => states.push(s)), states, sources, loaded };
}

const disposedEngines = new WeakSet<LoadedDraft>();
/** Whether a loaded draft's engine was disposed. */
function disposed(d: LoadedDraft): boolean {
  return disposedEngines.has(d);
}

test('prompt lookup by default; a draft model of the same tokenizer loads, shows its steps and bytes, and drafts the target\'s tokens', async () => {
  const h = harness();
  expect(h.sw.begin()).toBeInstanceOf(PromptLookupDrafter);
  h.sw.end();
  await h.sw.load('small');
  const steps = h.states.filter((s) => s.draft.kind === 'loading').map((s) => (s.draft as { step: string }).step);
  expect(steps[0]).toBe('starting…');
  expect(steps).toContain("checking small's tokenizer…");
  expect(steps.some((s) => /^loading small \(\d+ MB\)… 100%$/.test(s))).toBe(true);
  const last = h.states.at(-1)!;
  expect(last.draftError).toBeUndefined();
  expect(last.draft).toMatchObject({ kind: 'model', name: 'small' });
  // Its bytes: weights (embedding 151936 × 64 f32 and two layers) and KV at CTX + 8: more than the embedding alone.
  expect((last.draft as { bytes: number }).bytes).toBeGreaterThan(151_936 * 64 * 2);
  expect(h.sources[0]!.weightReads).toBeGreaterThan(0);
  const drafter = h.sw.begin();
  expect(drafter).toBeInstanceOf(DraftModelDrafter);
  expect(drafter.name).toBe('draft:small');
  expect((drafter as DraftModelDrafter).draftLength).toBe('auto');       // it chooses how many tokens to draft

  // It drafts, and the answer is plain decoding's.
  const source = new NodeFolderSource(dirs.target);
  const config = await loadModelConfig(source);
  const weights = await loadWeights(source, { layers: [0, config.numLayers], embedding: true, head: true });
  const prompt = [9707, 11, 1879, 0, 358, 1079, 264, 1273, 13];
  const plain = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, { maxNewTokens: 12 });
  const spec = await new Generator(new ReferenceEngine(weights, { ctx: CTX }), { ctx: CTX }).generate(prompt, { maxNewTokens: 12, speculate: { drafter } });
  h.sw.end();
  expect(spec.ids).toEqual(plain.ids);
  expect(spec.stats.drafter).toBe('draft:small');
  expect(spec.stats.drafted).toBeGreaterThan(0);
  await h.sw.close();
  expect(disposed(h.loaded[0]!)).toBe(true);
}, 120_000);

test('another vocabulary is refused by name before any weight is read; prompt lookup stays in effect', async () => {
  const h = harness();
  await h.sw.load('otherVocab');
  expect(h.states.at(-1)).toEqual({
    draft: { kind: 'lookup' },
    draftError: "DraftVocabularyError: draft model otherVocab does not share the target's tokenizer: vocabulary size 1000 (the target's: 151936)",
  });
  expect(h.sources[0]!.weightReads).toBe(0);
  expect(h.loaded).toEqual([]);
  expect(h.sw.begin()).toBeInstanceOf(PromptLookupDrafter);
  h.sw.end();
  // A failed load replaces a working draft model (both need not fit at once): lookup, and the old engine goes.
  await h.sw.load('small');
  expect(h.sw.model?.name).toBe('small');
  await h.sw.load('otherVocab');
  expect(h.sw.model).toBeUndefined();
  expect(disposed(h.loaded[0]!)).toBe(true);
  // A choice that is not there: the read error, by name, and lookup.
  await h.sw.load('missing');
  expect(h.states.at(-1)!.draft).toEqual({ kind: 'lookup' });
  expect(h.states.at(-1)!.draftError).toMatch(/^\w*Error: /);
}, 120_000);

test('replacing or leaving a draft model disposes its engine, but only once the answer drafting with it is done', async () => {
  const h = harness();
  await h.sw.load('small');
  const first = h.loaded[0]!;
  const inUse = h.sw.begin();                      // an answer is drafting with it
  expect(inUse).toBe(first.drafter);
  await h.sw.load('target');                        // the target as its own draft
  expect(h.sw.model?.name).toBe('target');
  expect(disposed(first)).toBe(false);       // still drafting
  h.sw.end();
  await expect.poll(() => disposed(first)).toBe(true);
  expect(h.sw.begin()).toBe(h.loaded[1]!.drafter);
  h.sw.end();
  h.sw.useLookup();
  expect(h.states.at(-1)).toEqual({ draft: { kind: 'lookup' }, draftError: undefined });
  await expect.poll(() => disposed(h.loaded[1]!)).toBe(true);
  expect(h.sw.begin()).toBeInstanceOf(PromptLookupDrafter);
  h.sw.end();
}, 120_000);

test('a load superseded while it runs is abandoned, and one that finished late is disposed; close ends loading', async () => {
  let open!: () => void;
  const h = harness({ gate: new Promise<void>((r) => { open = r; }) });
  const a = h.sw.load('small');
  const b = h.sw.load('target');
  open();
  await Promise.all([a, b]);
  expect(h.sw.model?.name).toBe('target');
  // The first load was aborted on the way (its signal) or disposed when it finished: never in effect.
  expect(h.states.filter((s) => s.draft.kind === 'model').map((s) => (s.draft as { name: string }).name)).toEqual(['target']);
  for (const d of h.loaded.filter((l) => l.name === 'small')) await expect.poll(() => disposed(d)).toBe(true);
  await h.sw.close();
  expect(disposed(h.loaded.find((l) => l.name === 'target')!)).toBe(true);
  await h.sw.load('small');                          // closed: nothing loads any more
  expect(h.sw.model).toBeUndefined();
}, 120_000);
