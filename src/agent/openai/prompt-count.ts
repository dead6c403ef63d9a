// Our prompt count against the server's. We count with the model's tokenizer; a server with another
// tokenizer (or one that renders the turns itself, on chat completions) counts its own. Every answer's
// `usage.prompt_tokens` is compared with ours: when they disagree (more than 1%, or 2 tokens), the
// timeline says so once and the server's count sets the budget from then on — the window is taken as
// contextSize × ours / theirs of our tokens, and max_tokens leaves room for the server's count of the
// prompt. When they agree, the server reads our tokens as we do: a server that takes token ids then gets
// the prompt as ids (openai-backend.ts).

export class PromptCounts {
  /** The server's tokens per one of ours, from the last answer that disagreed (1 while they agree). */
  ratio = 1;
  /** A server count agreed with ours at least once. */
  agreed = false;
  private named = false;

  /** Two counts agree within 1% (at least 2 tokens: a re-tokenized join can differ by one or two). */
  static agree(ours: number, theirs: number): boolean {
    return Math.abs(ours - theirs) <= Math.max(2, Math.ceil(ours / 100));
  }

  /** One answer's counts; the timeline's notice the first time they disagree, else null. */
  compare(ours: number, theirs: number): string | null {
    if (!(theirs > 0) || !(ours > 0)) return null;
    if (PromptCounts.agree(ours, theirs)) {
      this.agreed = true;
      this.ratio = 1;
      return null;
    }
    this.ratio = theirs / ours;
    if (this.named) return null;
    this.named = true;
    const n = (x: number) => x.toLocaleString('en-US');
    return `the server counted ${n(theirs)} prompt tokens where our tokenizer counts ${n(ours)}: its tokenizer (or its template) ` +
      'differs from ours, so its count sets the budget from now on';
  }

  /** The window in our tokens that holds what the server counts as `contextSize`. */
  window(contextSize: number): number {
    return Math.max(1, Math.floor(contextSize / this.ratio));
  }

  /** The server's count for a prompt of `ours` of our tokens. */
  theirs(ours: number): number {
    return Math.ceil(ours * this.ratio);
  }
}
