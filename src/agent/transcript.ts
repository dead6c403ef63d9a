// The trajectory users inspect and share: every turn as the model saw it, one JSON line each — the
// opening (system prompt and tools), each request, answer (the exact sampled text), tool results and
// note, in the order they were added, with token counts. Compactions are lines too, so a reader sees
// where the model's view of earlier turns was shortened. Written by `npm run agent -- --transcript FILE`
// and offered as a download by the app.
import type { Segment } from './conversation.ts';

export type TranscriptRole = 'system' | 'user' | 'assistant' | 'tool' | 'compaction';

export interface TranscriptLine {
  role: TranscriptRole;
  /** The exact rendered text of the turn (chat-template markup included). */
  text: string;
  /** Tokens of this turn; for a compaction, the conversation's tokens after it. */
  tokens: number;
  request?: number;
  step?: number;
  /** user turns the agent wrote itself: a note (hint, nudge, cut-off…) or a folded earlier request. */
  kind?: 'note' | 'fold';
  /** assistant: the prompt tokens the answer was sampled after. */
  promptTokens?: number;
}

export class Transcript {
  readonly lines: TranscriptLine[] = [];

  constructor(opening: { text: string; tokens: number }, restored: readonly Segment[] = []) {
    this.lines.push({ role: 'system', text: opening.text, tokens: opening.tokens });
    for (const s of restored) this.add(s);
  }

  add(s: Segment, promptTokens?: number): void {
    const base = { text: s.text, tokens: s.tokens.length, request: s.request };
    switch (s.kind) {
      case 'user': this.lines.push({ role: 'user', ...base }); break;
      case 'note': this.lines.push({ role: 'user', kind: 'note', ...base }); break;
      case 'fold': this.lines.push({ role: 'user', kind: 'fold', ...base }); break;
      case 'results': this.lines.push({ role: 'tool', ...base, step: s.step }); break;
      case 'assistant': {
        const line: TranscriptLine = { role: 'assistant', ...base, step: s.step };
        if (promptTokens !== undefined) line.promptTokens = promptTokens;
        this.lines.push(line);
        break;
      }
    }
  }

  compaction(note: string, tokensAfter: number, request: number): void {
    this.lines.push({ role: 'compaction', text: note, tokens: tokensAfter, request });
  }

  /** One JSON object per line. */
  jsonl(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  }
}
