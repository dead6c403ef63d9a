// The agent loop (docs/agent.md, The loop): the model answers, its tool calls run, the results go
// back, repeat — until an answer has no call. Every limit and end rule is checked here, in one place:
// done / stopped / limit (30 steps) / stuck / context / error. The conversation is exact token segments
// (conversation.ts) behind a byte-stable opening, so the pinned checkpoint after it is always valid.
import type { Backend, BackendResult } from './backend.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { AgentEvent, AgentListener, NoteKind, SkipReason } from './events.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { ProjectFiles } from './files/types.ts';
import type { ServedPort } from './tool-types.ts';
import type { CallCodec, CallConstraint } from './call-codec.ts';
import { garbageNote } from './grammar/forced-tokens.ts';
import { Conversation, type CallRecord, type Segment } from './conversation.ts';
import { TurnRenderer } from './turns.ts';
import { SYSTEM_PROMPT } from './system-prompt.ts';
import { answerCapFor, compactionTarget, conversationBudget } from './budget.ts';
import { ANSWER_CAP, MAX_STEPS } from './limits.ts';
import { compact, compactionNote, compactNowNote } from './compaction.ts';
import { CallMemory, runCall, type ApprovalRequest, type CallRun } from './call-runner.ts';
import { HintBudget, unreadableHint } from './hints.ts';
import { CallStreaks, PageErrorStreak, type StuckVerdict } from './stuck.ts';
import { endNote, speculationTip, summaryLine, type EndReason, type RequestStats } from './summary.ts';
import { AnswerStream } from './stream.ts';
import { Timeline, type TimelineItem } from './timeline.ts';
import { Transcript } from './transcript.ts';
import { neutralizeControlTokens } from './tools/clip.ts';


/** run() was called while a request is still running (one request at a time per agent). */
export class AgentBusyError extends Error {
  override name = 'AgentBusyError';
  constructor() {
    super('the agent is already running a request: stop it first');
  }
}
/** Typed as a request, shortens the conversation now instead of asking the model. */
export const COMPACT_COMMAND = '/compact';
export const NUDGE = 'Your answer was empty: call a tool or say you are done.';

export interface AgentOptions {
  backend: Backend;
  tools: ToolRegistry;
  format: ToolFormat;
  codec: CallCodec;
  /** When given, hand edits to these files count as changes (for the repeat rules). */
  files?: ProjectFiles;
  systemPrompt?: string;
  maxSteps?: number;
  answerCap?: number;
  /**
   * When set, an answer that reaches the answer cap ends the request (reason `limit`) with this note
   * instead of being dropped and asked again: for a model whose long answers are not worth another try
   * (the built-in tiny model has random weights and only writes gibberish).
   */
  answerCapNote?: string;
  /** "Ask first": write_file / edit_file wait for approve() or decide(). */
  askFirst?: boolean;
  approve?: (request: ApprovalRequest) => Promise<boolean>;
  /** A saved session (session-store.ts) to continue. */
  restore?: RestoredState;
  /** Compaction's stage 1 clears old written content too (default true; off only to measure it). */
  clearWrittenContent?: boolean;
}

export interface RestoredState { segments: Segment[]; timeline: TimelineItem[]; requests: number; servedPorts: ServedPort[] }

export interface RequestOutcome {
  reason: EndReason;
  summary: string;
  answer: string;
  stats: RequestStats;
  note: string | null;
}

export class Agent {
  readonly conversation: Conversation;
  readonly timeline: Timeline;
  readonly servedPorts: ServedPort[];
  /** Every turn as the model saw it, in order (transcript.ts). */
  readonly transcript: Transcript;
  private lastPromptTokens = 0;
  private requestCount: number;
  private nextCallId = 1;
  private listeners = new Set<AgentListener>();
  private pendingApprovals = new Map<number, (approved: boolean) => void>();
  private readonly system: string;
  private running = false;

  constructor(private readonly opts: AgentOptions) {
    this.system = opts.systemPrompt ?? SYSTEM_PROMPT;
    const turns = new TurnRenderer(opts.backend, this.system, opts.tools.schemas());
    this.conversation = new Conversation(opts.backend, turns, opts.restore?.segments);
    this.transcript = new Transcript({ text: turns.opening, tokens: this.conversation.openingTokens.length }, this.conversation.segments);
    this.conversation.onAppend = (s) => this.transcript.add(s, s.kind === 'assistant' ? this.lastPromptTokens : undefined);
    this.timeline = new Timeline(opts.restore?.timeline);
    this.requestCount = opts.restore?.requests ?? 0;
    this.servedPorts = [...(opts.restore?.servedPorts ?? [])];
  }

  get requests(): number {
    return this.requestCount;
  }

  subscribe(listener: AgentListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Answers a waiting "ask first" approval (when no approve callback was given). */
  decide(call: number, approved: boolean): void {
    this.pendingApprovals.get(call)?.(approved);
    this.pendingApprovals.delete(call);
  }

  /** New task: forget the conversation (the files are kept). */
  newTask(): void {
    this.conversation.segments.splice(0);
  }

  private emit(event: AgentEvent): void {
    this.timeline.apply(event);
    for (const listener of [...this.listeners]) listener(event);
  }

  private note(step: number, kind: NoteKind, text: string): void {
    this.emit({ type: 'note', step, kind, text });
  }

  private approve(request: ApprovalRequest, signal?: AbortSignal): Promise<boolean> {
    if (this.opts.approve) return this.opts.approve(request);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.pendingApprovals.set(request.call, resolve);
      signal?.addEventListener('abort', () => this.decide(request.call, false), { once: true });
    });
  }

  async run(requestText: string, options: { signal?: AbortSignal } = {}): Promise<RequestOutcome> {
    if (this.running) throw new AgentBusyError();
    if (requestText.trim() === COMPACT_COMMAND) return this.compactNow();
    this.running = true;
    const memory = new CallMemory();
    const offFiles = this.opts.files?.onChange(() => memory.changes++);
    try {
      return await this.runRequest(requestText, memory, options.signal);
    } finally {
      offFiles?.();
      this.running = false;
    }
  }

  private async runRequest(requestText: string, memory: CallMemory, signal?: AbortSignal): Promise<RequestOutcome> {
    const { backend, tools, codec } = this.opts;
    const request = this.requestCount++;
    const started = performance.now();
    const maxSteps = this.opts.maxSteps ?? MAX_STEPS;
    const cap = this.opts.answerCap ?? ANSWER_CAP;
    const budget = conversationBudget(backend.contextSize, cap);
    const target = compactionTarget(backend.contextSize, cap);
    const stats: RequestStats = { steps: 0, toolCalls: 0, generated: 0, generateSeconds: 0, devices: backend.devices, seconds: 0 };
    const hints = new HintBudget(this.opts.format);
    const streaks = new CallStreaks();
    const pageErrors = new PageErrorStreak();
    let nudged = false;
    let cleanServeAt = -1;
    let answer = '';

    const end = (reason: EndReason, detail: { error?: string; stuck?: string; left?: string; note?: string } = {}): RequestOutcome => {
      stats.seconds = (performance.now() - started) / 1000;
      const note = detail.note ?? endNote(reason, { ...detail, steps: stats.steps, devices: backend.devices });
      if (note) this.note(stats.steps, 'end', note);
      const line = summaryLine(stats, reason);
      const tip = speculationTip(stats);
      this.emit({ type: 'summary', request, reason, line, ...(tip ? { tip } : {}), stats: { ...stats }, answer });
      return { reason, summary: line, answer, stats: { ...stats }, note };
    };

    this.conversation.addUser(request, neutralizeControlTokens(requestText));
    this.emit({ type: 'request', request, text: requestText });

    for (let step = 1; step <= maxSteps; step++) {
      if (signal?.aborted) return end('stopped');
      // The last step is the closing answer: no tool runs any more, the model says what it did and what is left.
      const closing = step === maxSteps;
      if (closing) {
        this.conversation.addNote(request, FINAL_ANSWER_PROMPT);
        this.note(step, 'limit', `step ${step} of ${maxSteps}: the model is asked to sum up without tools`);
      }
      const report = compact(this.conversation, request, budget, target, { clearWrites: this.opts.clearWrittenContent ?? true });
      if (report) {
        this.note(step, 'compaction', compactionNote(report));
        this.transcript.compaction(compactionNote(report), report.after, request);
        if (!report.fits) return end('context');
      }
      const prompt = this.conversation.prompt();
      this.lastPromptTokens = prompt.length;
      this.emit({ type: 'step', request, step, promptTokens: prompt.length, contextSize: backend.contextSize });
      stats.steps = step;
      // Cards streamed for this answer take the ids firstCallId.. in order; the parsed calls reuse them.
      const firstCallId = this.nextCallId;
      const stream = new AnswerStream(step, firstCallId, (e) => this.emit(e));
      const constraint: CallConstraint | undefined = closing ? codec.noCalls?.() : codec.constraint?.();
      const result: BackendResult = await backend.generate({
        prompt,
        messages: this.conversation.messages(),
        maxNewTokens: answerCapFor(prompt.length, backend.contextSize, cap),
        stopTokens: this.stopTokens(),
        pinAt: this.conversation.pinAt,
        constraint,
        ...(closing ? { noCalls: true } : {}),
        signal,
        onText: (textSoFar) => stream.update(textSoFar),
      });
      if (result.notice) this.note(step, 'server', result.notice);
      stats.generated += result.stats.generated;
      stats.generateSeconds += result.stats.seconds;
      if (result.serverUsage) stats.serverTokens = (stats.serverTokens ?? 0) + result.serverUsage.completionTokens;
      if (result.stats.passes !== undefined) {
        stats.drafted = (stats.drafted ?? 0) + (result.stats.drafted ?? 0);
        stats.accepted = (stats.accepted ?? 0) + (result.stats.accepted ?? 0);
        stats.passes = (stats.passes ?? 0) + result.stats.passes;
        const d = result.stats.drafter;
        if (d && !(stats.drafter ?? '').split(', ').includes(d)) stats.drafter = stats.drafter ? `${stats.drafter}, ${d}` : d;
      }
      const streamed = stream.startedCalls;
      this.nextCallId = firstCallId + streamed;
      const closeStreamed = (from: number, why: Exclude<SkipReason, 'repeat'>) => this.closeCards(step, firstCallId + from, firstCallId + streamed, why);

      if (result.finish === 'stopped') {
        closeStreamed(0, 'stopped');
        answer = result.text;
        this.conversation.addAnswer(request, step, result.ids, result.text, true);
        // A stop the user did not ask for is the room's: its note names the device that left.
        return end('stopped', result.note && !signal?.aborted ? { left: result.note } : {});
      }
      if (result.finish === 'error') {
        closeStreamed(0, 'model-failed');
        return end('error', { error: result.error?.message ?? 'the model reported an error' });
      }
      const garbage = constraint?.garbage?.() ?? null;
      if (garbage) {
        closeStreamed(0, 'model-failed');
        return end('error', { error: garbageNote(garbage) });
      }
      if (closing) {
        // Whatever it wrote closes the request; a call in it (a server without the grammar) never runs.
        const parsed = codec.parse(result.text);
        closeStreamed(0, 'limit');
        answer = parsed.calls.length > 0 || parsed.unreadable ? parsed.text : result.text;
        this.conversation.addAnswer(request, step, result.ids, result.text, true);
        return end('limit');
      }
      if (result.finish === 'cap' && this.opts.answerCapNote) {
        closeStreamed(0, 'cut-off');
        answer = result.text;
        this.conversation.addAnswer(request, step, result.ids, result.text, true);
        return end('limit', { note: this.opts.answerCapNote });
      }
      if (result.finish === 'cap' || result.finish === 'context') {
        closeStreamed(0, 'cut-off');
        const text = cutOffNote(result, hints);
        this.conversation.addNote(request, text);
        this.note(step, 'cut-off', text);
        continue;
      }

      const parsed = codec.parse(result.text);
      answer = parsed.text;
      this.conversation.addAnswer(request, step, result.ids, result.text, parsed.calls.length === 0);
      // Streamed blocks that gave no call (unreadable, or fewer calls than blocks) close as not run.
      closeStreamed(parsed.calls.length, 'unreadable');
      this.nextCallId = firstCallId + Math.max(streamed, parsed.calls.length);
      if (parsed.calls.length === 0) {
        if (parsed.unreadable) {
          const verdict = streaks.record(step, [{ key: '(unreadable call)', label: 'an unreadable tool call', stalled: true, error: 'could not be read' }]);
          if (verdict.kind === 'stuck') return end('stuck', { stuck: verdict.note });
          const text = `Your tool call could not be read, so it did not run.${hintSuffix(hints.take(unreadableHint(result.text)))}`;
          this.conversation.addNote(request, text);
          this.note(step, 'format', text);
          if (verdict.kind === 'warn') {
            this.conversation.addNote(request, verdict.note);
            this.note(step, 'stuck-warning', verdict.note);
          }
          continue;
        }
        if (result.text.trim() === '') {
          if (nudged) return end('error', { error: 'it gave two empty answers' });
          nudged = true;
          this.conversation.addNote(request, NUDGE);
          this.note(step, 'nudge', NUDGE);
          continue;
        }
        return end('done');
      }

      const runs: CallRun[] = [];
      let stopped = false;
      for (const [i, call] of parsed.calls.entries()) {
        const id = firstCallId + i;
        if (signal?.aborted) {
          stopped = true;
          if (i < streamed) this.closeCards(step, id, id + 1, 'stopped');
          continue;
        }
        this.emit({ type: 'call', step, call: id, name: call.name, arguments: call.arguments, ...(call.repairs ? { repairs: [...call.repairs] } : {}) });
        stats.toolCalls++;
        const run = await runCall(call, step, id, {
          tools, hints, memory, askFirst: this.opts.askFirst ?? false,
          approve: (req) => this.approve(req, signal), emit: (e) => this.emit(e), signal,
        });
        runs.push(run);
        if (run.page) this.rememberServe(run.record, run.page.path ?? '');
      }
      this.conversation.addResults(request, step, runs.map((r) => r.record));
      if (stopped || signal?.aborted) return end('stopped');

      const verdicts: StuckVerdict[] = [streaks.record(step, runs.map((r) => r.stall))];
      const changed = runs.some((r) => r.record.changed);
      const afterCleanServe = cleanServeAt === step - 1 && !changed;
      cleanServeAt = -1;
      runs.forEach((r, i) => {
        if (!r.page) return;
        verdicts.push(pageErrors.check(r.page.errors[0] ?? null, r.changesBefore));
        const changedAfter = runs.slice(i + 1).some((later) => later.record.changed);
        if (r.page.loaded && r.page.errors.length === 0 && r.record.ok && !changedAfter) cleanServeAt = step;
      });
      const stuck = verdicts.find((v) => v.kind === 'stuck');
      if (stuck) return end('stuck', { stuck: stuck.note });
      const warnings = verdicts.flatMap((v) => (v.kind === 'warn' ? [v.note] : []));
      if (warnings.length > 0) {
        const text = warnings.join('\n');
        this.conversation.addNote(request, text);
        this.note(step, 'stuck-warning', text);
      }
      if (afterCleanServe) return end('done');
    }
    return end('limit');
  }

  /**
   * /compact: shortens the conversation now (stubs and folds, nothing dropped) without asking the model,
   * and shows before → after tokens. Not a request to the model: no turn is added.
   */
  private compactNow(): RequestOutcome {
    const cap = this.opts.answerCap ?? ANSWER_CAP;
    const size = this.opts.backend.contextSize;
    const report = compact(this.conversation, this.requestCount, conversationBudget(size, cap), compactionTarget(size, cap), {
      clearWrites: this.opts.clearWrittenContent ?? true, now: true,
    })!;
    const note = compactNowNote(report);
    if (report.stages.length > 0) this.transcript.compaction(note, report.after, this.requestCount);
    this.emit({ type: 'request', request: this.requestCount, text: COMPACT_COMMAND });
    this.note(0, 'compaction', note);
    const stats: RequestStats = { steps: 0, toolCalls: 0, generated: 0, generateSeconds: 0, devices: this.opts.backend.devices, seconds: 0 };
    return { reason: 'done', summary: note, answer: '', stats, note };
  }

  /** Call cards [from, to) shown while streaming whose calls will never run: each closes as not run. */
  private closeCards(step: number, from: number, to: number, why: Exclude<SkipReason, 'repeat'>): void {
    for (let id = from; id < to; id++) {
      this.emit({ type: 'result', step, call: id, name: '', ok: false, text: NOT_RUN[why], changed: false, skipped: why });
    }
  }

  private stopTokens(): number[] {
    const ids = ['<|im_end|>', '<|endoftext|>'].map((t) => this.opts.backend.encode(t)).filter((ids) => ids.length === 1);
    return ids.map((ids) => ids[0]!);
  }

  private rememberServe(record: CallRecord, path: string): void {
    if (record.port === undefined || !record.ok) return;
    const existing = this.servedPorts.find((p) => p.port === record.port);
    if (existing) existing.path = path;
    else this.servedPorts.push({ port: record.port, path });
  }
}

const NOT_RUN: Record<Exclude<SkipReason, 'repeat'>, string> = {
  'cut-off': 'not run: the answer was cut off',
  stopped: 'not run: stopped',
  unreadable: 'not run: the call could not be read',
  'model-failed': 'not run: the model failed',
  limit: 'not run: the request is out of steps',
};

/** The last step's note: the closing answer, without tools (an idea from Twinny's agent loop). */
export const FINAL_ANSWER_PROMPT = 'This is the last step of this request: no tool will run any more. ' +
  'Without calling a tool, tell the user in a few sentences what you did and what is still left to do. ' +
  'Do not describe a change you did not make as made.';

function hintSuffix(hint: string | null): string {
  return hint ? `\n${hint}` : '';
}

/** A cut-off answer is not an answer (docs/agent.md, End reasons): say so and ask for smaller steps. */
function cutOffNote(result: BackendResult, hints: HintBudget): string {
  const where = result.finish === 'cap' ? `the answer cap of ${result.stats.generated} tokens` : 'the end of the context';
  return `Your last answer was cut off at ${where} before it finished, so it was dropped and none of its calls ran. ` +
    'Work in smaller steps: change files with edit_file instead of rewriting them whole.' + hintSuffix(hints.take('long-files'));
}
