// Which drafter the host's speculative decoding uses: prompt lookup (no model, the default) or a draft
// model the user loaded. One choice at a time:
//   - loading a draft model first drops the one in effect (two draft models need not fit on the host at
//     once), so while it loads, and if it fails (another vocabulary, a bad URL, a read error), prompt
//     lookup is in effect and the failure is shown by name;
//   - a newer choice (another model, back to lookup, the room closing) abandons a load under way;
//   - an engine is disposed once replaced, but never under an answer that is drafting with it: answers
//     take the drafter with begin() and give it back with end(), and retired engines go when none is out.
// A draft model whose engine failed while drafting (DraftModelDrafter.failure) is no longer handed out.
import { PromptLookupDrafter } from '../model/speculative/prompt-lookup.ts';
import type { Drafter } from '../model/speculative/types.ts';
import type { DraftLoader, LoadedDraft } from './draft-loader.ts';

/** What the room panel shows of the choice. */
export type DraftChoiceState =
  | { kind: 'lookup' }
  | { kind: 'loading'; name: string; step: string }
  | { kind: 'model'; name: string; bytes: number };

export interface DraftSwitchState {
  draft: DraftChoiceState;
  /** The last load's failure ("DraftVocabularyError: …"), until the next choice. */
  draftError?: string;
}

export class DraftSwitch {
  /** Prompt lookup: one for the session, it indexes the conversation as it grows. */
  readonly lookup = new PromptLookupDrafter();
  private current: LoadedDraft | undefined;
  private loading: AbortController | undefined;
  private readonly retired: LoadedDraft[] = [];
  private out = 0;               // answers drafting now
  private closed = false;
  private disposal: Promise<void> = Promise.resolve();

  constructor(private readonly loader: DraftLoader, private readonly show: (s: DraftSwitchState) => void) {}

  /** The draft model in effect (undefined: prompt lookup). */
  get model(): LoadedDraft | undefined {
    return this.current;
  }

  /** The drafter for the next answer; call end() when the answer is done. */
  begin(): Drafter {
    this.out++;
    const d = this.current?.drafter;
    return d && !d.failure ? d : this.lookup;
  }

  end(): void {
    this.out = Math.max(0, this.out - 1);
    if (this.out === 0) void this.flush();
  }

  /**
   * Load `choice` (a Hugging Face id, URL, /path or "tiny") as the draft model. Resolves when it is in
   * effect, failed (shown in draftError; never rejects) or was superseded.
   */
  async load(choice: string): Promise<void> {
    if (this.closed) return;
    const name = choice.trim();
    this.drop();
    const abort = (this.loading = new AbortController());
    const step = (s: string) => { if (this.loading === abort) this.show({ draft: { kind: 'loading', name, step: s }, draftError: undefined }); };
    step('starting…');
    try {
      const loaded = await this.loader(name, step, abort.signal);
      if (this.loading !== abort) {                       // superseded while it loaded
        this.retire(loaded);
        return;
      }
      this.loading = undefined;
      this.current = loaded;
      this.show({ draft: { kind: 'model', name: loaded.name, bytes: loaded.bytes }, draftError: undefined });
    } catch (e) {
      if (this.loading !== abort) return;
      this.loading = undefined;
      const err = e as Error;
      this.show({ draft: { kind: 'lookup' }, draftError: `${err.name ?? 'Error'}: ${err.message ?? String(e)}` });
    }
  }

  /** Back to prompt lookup: the draft model in effect (or loading) goes. */
  useLookup(): void {
    this.drop();
    this.show({ draft: { kind: 'lookup' }, draftError: undefined });
  }

  /** The room closes: abandon any load, dispose every engine once no answer drafts with it. */
  async close(): Promise<void> {
    this.closed = true;
    this.drop();
    await this.flush();
  }

  private drop(): void {
    this.loading?.abort();
    this.loading = undefined;
    if (this.current) this.retire(this.current);
    this.current = undefined;
  }

  private retire(d: LoadedDraft): void {
    this.retired.push(d);
    void this.flush();
  }

  /** Dispose the retired engines unless an answer is drafting (then its end() does); resolves when done. */
  private flush(): Promise<void> {
    if (this.out > 0 || this.retired.length === 0) return this.disposal;
    const gone = this.retired.splice(0);
    this.disposal = this.disposal
      .then(() => Promise.all(gone.map((d) => d.drafter.engine.dispose().catch(() => undefined))))
      .then(() => undefined);
    return this.disposal;
  }
}
