// The agent's conversation as exact token segments. The prompt for a step is
//   opening ++ segment tokens ... ++ generation prompt
// Assistant segments hold the tokens the model sampled (never re-encoded), so each step's prompt starts
// with the previous prompt plus the previous answer: the engine's KV cache covers all of it.
import type { Backend, RequestMessage } from './backend.ts';
import type { ResultForTurn, TurnRenderer } from './turns.ts';
import { STUB_MIN_CHARS } from './limits.ts';

/** One tool call as the conversation remembers it (for stubs, folds and the session). */
export interface CallRecord {
  name: string;
  arguments: Record<string, unknown>;
  ok: boolean;
  changed: boolean;
  /** The result text the model saw (already framed and clipped). */
  content: string;
  /** Replaced by a one-line stub by compaction. */
  stubbed?: boolean;
  port?: number;               // serve: the preview port
}

export type Segment =
  | { kind: 'user'; request: number; text: string; tokens: number[]; content: string }
  | { kind: 'assistant'; request: number; step: number; text: string; tokens: number[]; content: string; final: boolean; cleared?: boolean }
  | { kind: 'results'; request: number; step: number; text: string; tokens: number[]; calls: CallRecord[] }
  | { kind: 'note'; request: number; text: string; tokens: number[]; content: string }
  | { kind: 'fold'; request: number; text: string; tokens: number[]; content: string };

/** The stub that replaces an old tool result: "(output of read_file game.js dropped; run it again if needed)". */
export function stubFor(call: CallRecord): string {
  return `(output of ${describeCall(call)} dropped; run it again if needed)`;
}

/** "read_file game.js", "search \"score\" src", "list_dir" — a call in a few words. */
export function describeCall(call: { name: string; arguments: Record<string, unknown> }): string {
  const a = call.arguments;
  const parts: string[] = [call.name];
  if (typeof a.pattern === 'string') parts.push(JSON.stringify(a.pattern.length > 40 ? a.pattern.slice(0, 40) + '…' : a.pattern));
  if (typeof a.path === 'string' && a.path !== '') parts.push(a.path);
  if (typeof a.code === 'string') parts.push(`(${a.code.length} chars of code)`);
  return parts.join(' ');
}

export class Conversation {
  readonly segments: Segment[] = [];
  /** Told of every segment appended (the transcript listens). */
  onAppend?: (segment: Segment) => void;
  readonly openingTokens: number[];
  readonly generationTokens: number[];
  private readonly closeTokens: number[];

  constructor(private readonly backend: Backend, readonly turns: TurnRenderer, restored?: Segment[]) {
    this.openingTokens = backend.encode(turns.opening);
    this.generationTokens = backend.encode(turns.generationPrompt);
    this.closeTokens = backend.encode(turns.assistantClose);
    if (restored) this.segments.push(...restored);
  }

  /** Where the pinned checkpoint sits: right after the system prompt + tools. */
  get pinAt(): number {
    return this.openingTokens.length;
  }

  /** The whole prompt for the next answer. */
  prompt(): number[] {
    const out = [...this.openingTokens];
    for (const s of this.segments) for (const t of s.tokens) out.push(t);
    for (const t of this.generationTokens) out.push(t);
    return out;
  }

  promptLength(): number {
    return this.openingTokens.length + this.segments.reduce((n, s) => n + s.tokens.length, 0) + this.generationTokens.length;
  }

  promptText(): string {
    return this.turns.opening + this.segments.map((s) => s.text).join('') + this.turns.generationPrompt;
  }

  /**
   * The conversation as chat messages, for a server that renders the turns with its own template: the
   * system prompt (the tools go beside it), the user turns, each answer as its prose with the calls that
   * ran as tool_calls (cleared as the turn was) and its sampled text, and their results as tool messages right after it. Results
   * that no longer follow their answer go as the user turn our template writes for them.
   */
  messages(): RequestMessage[] {
    const out: RequestMessage[] = [{ role: 'system', content: this.turns.system }];
    this.segments.forEach((s, i) => {
      if (s.kind === 'assistant') {
        const next = this.segments[i + 1];
        if (next?.kind === 'results' && next.step === s.step && next.request === s.request && next.calls.length > 0) {
          const open = s.content.indexOf('<tool_call>');
          const prose = open < 0 ? '' : s.content.slice(0, open).trimEnd();
          const calls = next.calls.map((c) => ({ name: c.name, arguments: s.cleared ? clearedArguments(c) : c.arguments }));
          out.push(s.cleared ? { role: 'assistant', content: prose, tool_calls: calls } : { role: 'assistant', content: prose, tool_calls: calls, sampled: s.content });
        } else {
          out.push({ role: 'assistant', content: s.content });
        }
      } else if (s.kind === 'results') {
        const prev = this.segments[i - 1];
        const answered = prev?.kind === 'assistant' && prev.step === s.step && prev.request === s.request && s.calls.length > 0;
        if (answered) for (const c of s.calls) out.push({ role: 'tool', name: c.name, content: resultForTurn(c).content });
        else out.push({ role: 'user', content: this.turns.userContentOf(s.text) ?? s.text });
      } else {
        out.push({ role: 'user', content: s.content });
      }
    });
    return out;
  }

  addUser(request: number, content: string): void {
    const text = this.turns.userTurn(content);
    this.segments.push({ kind: 'user', request, text, tokens: this.backend.encode(text), content });
    this.onAppend?.(this.segments.at(-1)!);
  }

  addNote(request: number, content: string): void {
    const text = this.turns.userTurn(content);
    this.segments.push({ kind: 'note', request, text, tokens: this.backend.encode(text), content });
    this.onAppend?.(this.segments.at(-1)!);
  }

  /** The model's answer with the exact tokens it sampled. */
  addAnswer(request: number, step: number, sampled: number[], content: string, final: boolean): void {
    const tokens = [...this.generationTokens, ...sampled, ...this.closeTokens];
    this.segments.push({ kind: 'assistant', request, step, tokens, text: this.backend.decode(tokens), content, final });
    this.onAppend?.(this.segments.at(-1)!);
  }

  addResults(request: number, step: number, calls: CallRecord[]): void {
    const text = this.turns.resultsTurn(calls.map(resultForTurn));
    this.segments.push({ kind: 'results', request, step, calls, text, tokens: this.backend.encode(text) });
    this.onAppend?.(this.segments.at(-1)!);
  }

  /** Re-renders a results segment after some of its calls were stubbed. */
  rerenderResults(index: number): void {
    const s = this.segments[index];
    if (s?.kind !== 'results') return;
    s.text = this.turns.resultsTurn(s.calls.map(resultForTurn));
    s.tokens = this.backend.encode(s.text);
  }

  /**
   * Compaction: the assistant turn at `index` is written again with its calls' long written content
   * (write_file content, edit_file old / new) replaced by a stub; name and path stay. The sampled tokens
   * go: the turn is encoded from its new text.
   */
  clearWrittenContent(index: number, calls: CallRecord[]): void {
    const s = this.segments[index];
    if (s?.kind !== 'assistant' || s.cleared) return;
    const open = s.content.indexOf('<tool_call>');
    const prose = (open < 0 ? s.content : s.content.slice(0, open)).trimEnd();
    s.text = this.turns.assistantWithCalls(prose, calls.map((c) => ({ name: c.name, arguments: clearedArguments(c) })));
    s.tokens = this.backend.encode(s.text);
    s.cleared = true;
  }

  /** Replaces segments [from, to) with one folded user turn + (optionally) the request's exact answer. */
  fold(request: number, from: number, to: number, line: string, answer: Segment | undefined): void {
    const text = this.turns.userTurn(line);
    const folded: Segment[] = [{ kind: 'fold', request, text, tokens: this.backend.encode(text), content: line }];
    if (answer) folded.push(answer);
    this.segments.splice(from, to - from, ...folded);
  }

  removeRange(from: number, to: number): void {
    this.segments.splice(from, to - from);
  }
}

/** The arguments whose text a file-changing call wrote; compaction may clear them once they are in the file. */
export const WRITTEN_ARGUMENTS: Readonly<Record<string, readonly string[]>> = { write_file: ['content'], edit_file: ['old', 'new'] };

/** The call's long written arguments, each as "[cleared to save context: N characters, in the file now]". */
export function clearedArguments(call: { name: string; arguments: Record<string, unknown> }, minChars = STUB_MIN_CHARS): Record<string, unknown> {
  const out = { ...call.arguments };
  for (const key of WRITTEN_ARGUMENTS[call.name] ?? []) {
    const v = out[key];
    if (typeof v === 'string' && v.length > minChars) out[key] = `[cleared to save context: ${v.length.toLocaleString('en-US')} characters, in the file now]`;
  }
  return out;
}

function resultForTurn(call: CallRecord): ResultForTurn {
  return { name: call.name, content: call.stubbed ? stubFor(call) : call.content };
}
