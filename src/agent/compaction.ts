// Fitting the conversation into its budget (docs/agent.md, Context and compaction). Past the budget it is
// shortened to 60% of it, cheapest first:
//   1. tool results older than the last 2 steps and over 200 characters become one-line stubs, and so
//      does what those steps wrote: write_file content and edit_file old / new in the assistant turn
//      (the call keeps its name and path; the file itself has the text);
//   2. earlier finished requests fold into one line each ([earlier: wrote …; edited …; served :5173])
//      plus their answer: the line is the whole user turn, the answer keeps its exact tokens;
//   3. the oldest earlier requests are dropped;
//   4. if it still does not fit the budget, the request ends with reason `context`.
// The current request is only ever stubbed. The opening (system prompt + tools) is never touched, so
// the pinned checkpoint after it stays valid and only the tokens after it are computed again.
import { clearedArguments, type CallRecord, type Conversation, type Segment } from './conversation.ts';
import { KEEP_RECENT_STEPS, STUB_MIN_CHARS } from './limits.ts';

export type CompactionStage = 'stubs' | 'fold' | 'drop';

export interface CompactionReport {
  before: number;              // prompt tokens before
  after: number;               // prompt tokens after
  stages: CompactionStage[];   // the stages that changed something
  fits: boolean;               // after <= budget
}

/** The timeline note for a compaction. */
export function compactionNote(report: CompactionReport): string {
  return `older steps shortened to fit the context (${report.before} → ${report.after} tokens)`;
}

/** The timeline note for /compact. */
export function compactNowNote(report: CompactionReport): string {
  return report.stages.length === 0
    ? `nothing to shorten: the conversation is ${report.before} tokens`
    : `compacted now: older steps shortened (${report.before} → ${report.after} tokens)`;
}

/** "[earlier: wrote index.html, game.js; edited game.js; served :5173]" from a request's calls. */
export function foldLine(calls: CallRecord[]): string {
  const wrote = new Set<string>();
  const edited = new Set<string>();
  const served = new Set<string>();
  for (const c of calls) {
    if (!c.ok) continue;
    const path = typeof c.arguments.path === 'string' ? c.arguments.path : '';
    if (c.name === 'write_file' && c.changed) wrote.add(path);
    else if (c.name === 'edit_file' && c.changed) edited.add(path);
    else if (c.name === 'serve') served.add(`:${c.port ?? 5173}`);
  }
  const parts: string[] = [];
  if (wrote.size) parts.push(`wrote ${[...wrote].join(', ')}`);
  if (edited.size) parts.push(`edited ${[...edited].join(', ')}`);
  if (served.size) parts.push(`served ${[...served].join(', ')}`);
  return `[earlier: ${parts.length ? parts.join('; ') : 'no files changed'}]`;
}

export interface CompactOptions {
  /** Stage 1 clears old written content too (default true; the bench measures without it). */
  clearWrites?: boolean;
  /** /compact: run stages 1 and 2 in full now, whatever the budget, and drop nothing. */
  now?: boolean;
}

/** Shortens `conv` in place when its prompt is over budget. Returns null when nothing was needed. */
export function compact(conv: Conversation, currentRequest: number, budget: number, target: number, opts: CompactOptions = {}): CompactionReport | null {
  const before = conv.promptLength();
  if (!opts.now && before <= budget) return null;
  const stages: CompactionStage[] = [];
  const done = () => !opts.now && conv.promptLength() <= target;

  // 1. Stubs: all results segments but the last KEEP_RECENT_STEPS, oldest first.
  const resultIdx = conv.segments.flatMap((s, i) => (s.kind === 'results' ? [i] : []));
  for (const i of resultIdx.slice(0, Math.max(0, resultIdx.length - KEEP_RECENT_STEPS))) {
    if (done()) break;
    const seg = conv.segments[i] as Extract<Segment, { kind: 'results' }>;
    let changed = false;
    for (const call of seg.calls) {
      if (!call.stubbed && call.content.length > STUB_MIN_CHARS) {
        call.stubbed = true;
        changed = true;
      }
    }
    if (changed) conv.rerenderResults(i);
    const answer = opts.clearWrites === false ? -1 : answerIndexOf(conv, i);
    const written = answer >= 0 && seg.calls.some((c) => JSON.stringify(clearedArguments(c)) !== JSON.stringify(c.arguments));
    if (written && !(conv.segments[answer] as Extract<Segment, { kind: 'assistant' }>).cleared) {
      conv.clearWrittenContent(answer, seg.calls);
      changed = true;
    }
    if (changed && !stages.includes('stubs')) stages.push('stubs');
  }

  // 2. Fold earlier requests, oldest first.
  for (const request of earlierRequests(conv, currentRequest)) {
    if (done()) break;
    const [from, to] = requestRange(conv, request);
    const range = conv.segments.slice(from, to);
    if (range.some((s) => s.kind === 'fold')) continue;
    if (!range.some((s) => s.kind === 'results')) continue; // no steps to fold: already one turn + answer
    const calls = range.flatMap((s) => (s.kind === 'results' ? s.calls : []));
    const answer = [...range].reverse().find((s) => s.kind === 'assistant' && s.final);
    conv.fold(request, from, to, foldLine(calls), answer);
    if (!stages.includes('fold')) stages.push('fold');
  }

  // 3. Drop the oldest earlier requests.
  for (const request of opts.now ? [] : earlierRequests(conv, currentRequest)) {
    if (done()) break;
    const [from, to] = requestRange(conv, request);
    conv.removeRange(from, to);
    if (!stages.includes('drop')) stages.push('drop');
  }

  const after = conv.promptLength();
  return { before, after, stages, fits: after <= budget };
}

/** The assistant turn whose calls gave the results segment at `index` (same request and step), or -1. */
function answerIndexOf(conv: Conversation, index: number): number {
  const results = conv.segments[index]!;
  if (results.kind !== 'results') return -1;
  for (let i = index - 1; i >= 0; i--) {
    const s = conv.segments[i]!;
    if (s.kind === 'assistant' && s.request === results.request && s.step === results.step) return i;
    if (s.request !== results.request) break;
  }
  return -1;
}

function earlierRequests(conv: Conversation, current: number): number[] {
  return [...new Set(conv.segments.map((s) => s.request))].filter((r) => r < current).sort((a, b) => a - b);
}

function requestRange(conv: Conversation, request: number): [number, number] {
  const from = conv.segments.findIndex((s) => s.request === request);
  let to = from;
  while (to < conv.segments.length && conv.segments[to]!.request === request) to++;
  return [from, to];
}
