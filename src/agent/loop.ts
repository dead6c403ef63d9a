// The agent loop (docs/agent.md, The loop): the model answers, its tool calls run, the results go
// back, repeat — until an answer has no call. The conversation is exact token segments (conversation.ts)
// behind a byte-stable opening, so the pinned checkpoint after it is always valid.
//
// A request is run → step → query → executeCalls (mini-swe-agent's shape). Every end is a RequestEnded
// thrown where its rule is checked and caught in ONE place, runRequest, which writes the note and the
// summary (end). The end rules, all of them, and where each is raised:
//   stopped  Stop before a step (step) or before a call (executeCalls, the calls not reached stay not run);
//            the model's run ended `stopped` — the partial answer kept, a device that left named (endOnFinish)
//   error    the engine or server failed, or the call grammar saw garbage (endOnFinish); a second empty
//            answer after the nudge (readCalls)
//   limit    the closing answer at step maxSteps (30), sampled without calls, whatever it says
//            (endOnFinish); an answer at the cap when `answerCapNote` is set (endOnFinish); out of steps
//   context  the conversation does not fit even after compaction (compactToFit)
//   stuck    the same unreadable answer, or the same call stalling, 3 steps in a row (readCalls,
//            checkProgress); the page's same first error 5 times after changes (checkProgress)
//   done     an answer without a call (readCalls); a step that changed nothing right after a serve whose
//            page loaded clean (checkProgress)
// Not ends: a cut-off answer is dropped and asked again smaller (dropCutOff); an empty one gets one nudge.
import type { Backend, BackendResult } from './backend.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { AgentEvent, AgentListener, NoteKind } from './events.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { ProjectFiles } from './files/types.ts';
import type { ServedPort } from './tool-types.ts';
import type { CallCodec, CallConstraint } from './call-codec.ts';
import { garbageNote } from './grammar/forced-tokens.ts';
import { Conversation, describeCall, type CallRecord, type Segment } from './conversation.ts';
import { TurnRenderer } from './turns.ts';
import { systemPromptFor } from './system-prompt.ts';
import { answerCapFor, compactionTarget, conversationBudget } from './budget.ts';
import { ANSWER_CAP, MAX_RERUNS, MAX_STEPS } from './limits.ts';
import { compact, compactionNote, compactNowNote } from './compaction.ts';
import { CallMemory, runCall, type ApprovalRequest, type CallRun, type CallToRun } from './call-runner.ts';
import { unreadableHint, type HintBudget } from './hints.ts';
import type { StuckVerdict } from './stuck.ts';
import { contextFullNote, endNote, speculationTip, summaryLine, type ContextParts, type EndReason, type RequestStats } from './summary.ts';
import { RequestEnded, RequestRun, type Answer, type NotRunReason } from './request-run.ts';
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
    this.system = opts.systemPrompt ?? systemPromptFor(opts.tools.schemas().map((s) => s.name));
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
    const { backend, format } = this.opts;
    const cap = this.opts.answerCap ?? ANSWER_CAP;
    const limits = {
      maxSteps: this.opts.maxSteps ?? MAX_STEPS, cap,
      budget: conversationBudget(backend.contextSize, cap), target: compactionTarget(backend.contextSize, cap),
    };
    const run = new RequestRun(this.requestCount++, limits, memory, format, backend, signal);
    this.conversation.addUser(run.request, neutralizeControlTokens(requestText));
    this.emit({ type: 'request', request: run.request, text: requestText });
    try {
      for (let step = 1; step <= limits.maxSteps; step++) await this.step(run, step);
      throw new RequestEnded('limit');
    } catch (e) {
      if (e instanceof RequestEnded) return this.end(run, e);
      throw e;
    }
  }

  /** One step: fit the context, ask the model, read its answer, run its calls, check for progress. */
  private async step(run: RequestRun, step: number): Promise<void> {
    if (run.stopped) throw new RequestEnded('stopped');
    // The last step is the closing answer: no tool runs any more, the model says what it did and what is left.
    const closing = step === run.limits.maxSteps;
    if (closing) {
      this.conversation.addNote(run.request, FINAL_ANSWER_PROMPT);
      this.note(step, 'limit', `step ${step} of ${run.limits.maxSteps}: the model is asked to sum up without tools`);
    }
    this.compactToFit(run, step);
    let answer = await this.query(run, step, closing);
    while (await this.rerunAfterLoss(run, answer)) answer = await this.query(run, step, closing);
    this.endOnFinish(run, answer, closing);
    if (answer.result.finish === 'cap' || answer.result.finish === 'context') return this.dropCutOff(run, answer);
    const calls = this.readCalls(run, answer);
    if (calls.length === 0) return;
    const runs = await this.executeCalls(run, answer, calls);
    this.checkProgress(run, step, runs);
  }

  /** Compaction when over budget; ends `context` when even that does not fit. */
  private compactToFit(run: RequestRun, step: number): void {
    const { budget, target } = run.limits;
    const report = compact(this.conversation, run.request, budget, target, { clearWrites: this.opts.clearWrittenContent ?? true });
    if (!report) return;
    this.note(step, 'compaction', compactionNote(report));
    this.transcript.compaction(compactionNote(report), report.after, run.request);
    if (!report.fits) throw new RequestEnded('context', { note: contextFullNote(this.contextParts(run)) });
  }

  /**
   * The room stopped this answer (a device left; not the user's Stop): when the backend can recover, wait
   * for the room to deal its layers again and run the answer again (the conversation is unchanged, so the
   * room reuses every KV entry up to the last pinned point). The user sees one line. true: query again.
   */
  private async rerunAfterLoss(run: RequestRun, answer: Answer): Promise<boolean> {
    const { result } = answer;
    const recover = this.opts.backend.recover;
    if (result.finish !== 'stopped' || !result.note || run.stopped || !recover || run.reruns >= MAX_RERUNS) return false;
    const outcome = await recover(run.signal).catch((e: Error) => ({ ok: false as const, text: e.message }));
    if (run.stopped) return false;
    if (!outcome.ok) { run.notRecovered = outcome.text; return false; }
    run.reruns++;
    this.closeCards(answer.step, answer.firstCallId, answer.firstCallId + answer.streamed, 'stopped');
    this.note(answer.step, 'rerun', `${result.note}: ${outcome.text}; the answer runs again from the last pinned point`);
    return true;
  }

  /** The conversation's parts in tokens, for the end note that says which is too long. */
  private contextParts(run: RequestRun): ContextParts {
    const segments = this.conversation.segments;
    const sum = (keep: (s: Segment) => boolean) => segments.filter(keep).reduce((t, s) => t + s.tokens.length, 0);
    const mine = (s: Segment) => s.request === run.request;
    return {
      budget: run.limits.budget, contextSize: this.opts.backend.contextSize, opening: this.conversation.openingTokens.length,
      message: sum((s) => mine(s) && s.kind === 'user'), steps: sum((s) => mine(s) && s.kind !== 'user'), earlier: sum((s) => !mine(s)),
      total: this.conversation.promptLength(),
    };
  }

  /** Asks the model for one answer, streaming it into call cards; the closing answer gets the no-call mask. */
  private async query(run: RequestRun, step: number, closing: boolean): Promise<Answer> {
    const { backend, codec } = this.opts;
    const prompt = this.conversation.prompt();
    this.lastPromptTokens = prompt.length;
    this.emit({ type: 'step', request: run.request, step, promptTokens: prompt.length, contextSize: backend.contextSize });
    run.stats.steps = step;
    // Cards streamed for this answer take the ids firstCallId.. in order; the parsed calls reuse them.
    const firstCallId = this.nextCallId;
    const stream = new AnswerStream(step, firstCallId, (e) => this.emit(e));
    const constraint: CallConstraint | undefined = closing ? codec.noCalls?.() : codec.constraint?.();
    const result: BackendResult = await backend.generate({
      prompt,
      messages: this.conversation.messages(),
      maxNewTokens: answerCapFor(prompt.length, backend.contextSize, run.limits.cap),
      stopTokens: this.stopTokens(),
      pinAt: this.conversation.pinAt,
      constraint,
      ...(closing ? { noCalls: true } : {}),
      signal: run.signal,
      onText: (textSoFar) => stream.update(textSoFar),
    });
    if (result.notice) this.note(step, 'server', result.notice);
    run.addAnswerStats(result);
    this.nextCallId = firstCallId + stream.startedCalls;
    return { step, result, constraint, firstCallId, streamed: stream.startedCalls };
  }

  /**
   * The answers that end the request whatever they say: stopped, failed, garbage, the closing answer, and
   * a capped one when the cap ends requests (`answerCapNote`).
   */
  private endOnFinish(run: RequestRun, answer: Answer, closing: boolean): void {
    const { result } = answer;
    if (result.finish === 'stopped') {
      this.keepAnswer(run, answer, 'stopped', result.text);
      // A stop the user did not ask for is the room's: its note names the device that left.
      if (result.note && !run.stopped && run.notRecovered) throw new RequestEnded('stopped', { note: `stopped: ${result.note}. ${run.notRecovered}` });
      throw new RequestEnded('stopped', result.note && !run.stopped ? { left: result.note } : {});
    }
    if (result.finish === 'error') this.failAnswer(answer, result.error?.message ?? 'the model reported an error');
    const garbage = answer.constraint?.garbage?.() ?? null;
    if (garbage) this.failAnswer(answer, garbageNote(garbage));
    if (closing) {
      // Whatever it wrote closes the request; a call in it (a server without the grammar) never runs.
      const parsed = this.opts.codec.parse(result.text);
      this.keepAnswer(run, answer, 'limit', parsed.calls.length > 0 || parsed.unreadable ? parsed.text : result.text);
      throw new RequestEnded('limit');
    }
    if (result.finish === 'cap' && this.opts.answerCapNote) {
      this.keepAnswer(run, answer, 'cut-off', result.text);
      throw new RequestEnded('limit', { note: this.opts.answerCapNote });
    }
  }

  /** A cut-off answer is not an answer: its cards close as not run, it is dropped, and the model told why. */
  private dropCutOff(run: RequestRun, answer: Answer): void {
    this.closeCards(answer.step, answer.firstCallId, answer.firstCallId + answer.streamed, 'cut-off');
    const text = cutOffNote(answer.result, run.hints);
    this.conversation.addNote(run.request, text);
    this.note(answer.step, 'cut-off', text);
  }

  /** An answer that ends the request as written: its cards close as not run, its text is kept. */
  private keepAnswer(run: RequestRun, answer: Answer, why: NotRunReason, shown: string): void {
    this.closeCards(answer.step, answer.firstCallId, answer.firstCallId + answer.streamed, why);
    run.answer = shown;
    this.conversation.addAnswer(run.request, answer.step, answer.result.ids, answer.result.text, true);
  }

  private failAnswer(answer: Answer, error: string): never {
    this.closeCards(answer.step, answer.firstCallId, answer.firstCallId + answer.streamed, 'model-failed');
    throw new RequestEnded('error', { error });
  }
  /**
   * Parses an answer that finished and records it. No call: an unreadable one gets a note (and counts
   * toward stuck), an empty one the nudge or, after it, `error`; any other text is `done`.
   */
  private readCalls(run: RequestRun, answer: Answer): CallToRun[] {
    const { step, result, firstCallId, streamed } = answer;
    const parsed = this.opts.codec.parse(result.text);
    run.answer = parsed.text;
    this.conversation.addAnswer(run.request, step, result.ids, result.text, parsed.calls.length === 0);
    // Streamed blocks that gave no call (unreadable, or fewer calls than blocks) close as not run.
    this.closeCards(step, firstCallId + parsed.calls.length, firstCallId + streamed, 'unreadable');
    this.nextCallId = firstCallId + Math.max(streamed, parsed.calls.length);
    if (parsed.calls.length > 0) return parsed.calls;
    if (parsed.unreadable) {
      const verdict = run.streaks.record(step, [{ key: '(unreadable call)', label: 'an unreadable tool call', stalled: true, error: 'could not be read' }]);
      if (verdict.kind === 'stuck') throw new RequestEnded('stuck', { stuck: verdict.note });
      this.tell(run, step, 'format', `Your tool call could not be read, so it did not run.${hintSuffix(run.hints.take(unreadableHint(result.text)))}`);
      if (verdict.kind === 'warn') this.tell(run, step, 'stuck-warning', verdict.note);
      return [];
    }
    if (result.text.trim() !== '') throw new RequestEnded('done');
    if (run.nudged) throw new RequestEnded('error', { error: 'it gave two empty answers' });
    run.nudged = true;
    this.tell(run, step, 'nudge', NUDGE);
    return [];
  }

  /** Runs the answer's calls in order; Stop before a call leaves it (and the rest) not run and ends `stopped`. */
  private async executeCalls(run: RequestRun, answer: Answer, calls: CallToRun[]): Promise<CallRun[]> {
    const { step, firstCallId, streamed } = answer;
    const runs: CallRun[] = [];
    for (const [i, call] of calls.entries()) {
      const id = firstCallId + i;
      if (run.stopped) {
        if (i < streamed) this.closeCards(step, id, id + 1, 'stopped');
        continue;
      }
      this.emit({ type: 'call', step, call: id, name: call.name, arguments: call.arguments, ...(call.repairs ? { repairs: [...call.repairs] } : {}) });
      run.stats.toolCalls++;
      const done = await runCall(call, step, id, {
        tools: this.opts.tools, hints: run.hints, memory: run.memory, askFirst: this.opts.askFirst ?? false,
        approve: (req) => this.approve(req, run.signal), emit: (e) => this.emit(e), signal: run.signal,
      });
      runs.push(done);
      if (done.page) this.rememberServe(done.record, done.page.path ?? '');
    }
    this.conversation.addResults(run.request, step, runs.map((r) => r.record));
    if (run.stopped) {
      const ran = runs.filter((r) => !r.rejected).map((r) => r.stall.label);
      const notRun = [...runs.filter((r) => r.rejected).map((r) => r.stall.label), ...calls.slice(runs.length).map(describeCall)];
      throw new RequestEnded('stopped', ran.length > 0 ? { ran, notRun } : {});
    }
    return runs;
  }

  /**
   * After the calls ran: stuck (the same call stalled, the page's same first error after changes) ends
   * `stuck`, a warning goes back one step before; a step that changed nothing after a clean serve is `done`.
   */
  private checkProgress(run: RequestRun, step: number, runs: CallRun[]): void {
    const verdicts: StuckVerdict[] = [run.streaks.record(step, runs.map((r) => r.stall))];
    const changed = runs.some((r) => r.record.changed);
    const afterCleanServe = run.cleanServeAt === step - 1 && !changed;
    run.cleanServeAt = -1;
    runs.forEach((r, i) => {
      if (!r.page) return;
      verdicts.push(run.pageErrors.check(r.page.errors[0] ?? null, r.changesBefore));
      const changedAfter = runs.slice(i + 1).some((later) => later.record.changed);
      if (r.page.loaded && r.page.errors.length === 0 && r.record.ok && !changedAfter) run.cleanServeAt = step;
    });
    const stuck = verdicts.find((v) => v.kind === 'stuck');
    if (stuck) throw new RequestEnded('stuck', { stuck: stuck.note });
    const warnings = verdicts.flatMap((v) => (v.kind === 'warn' ? [v.note] : []));
    if (warnings.length > 0) this.tell(run, step, 'stuck-warning', warnings.join('\n'));
    if (afterCleanServe) throw new RequestEnded('done');
  }

  /** The one place a request ends: its note (unless `done`), then the summary event and the outcome. */
  private end(run: RequestRun, ended: RequestEnded): RequestOutcome {
    const { stats } = run;
    const { backend } = this.opts;
    stats.seconds = (performance.now() - run.started) / 1000;
    const { note: given, ...detail } = ended.detail;
    const note = given ?? endNote(ended.reason, { ...detail, steps: stats.steps, devices: backend.devices });
    if (note) this.note(stats.steps, 'end', note);
    const line = summaryLine(stats, ended.reason);
    const tip = speculationTip(stats);
    this.emit({ type: 'summary', request: run.request, reason: ended.reason, line, ...(tip ? { tip } : {}), stats: { ...stats }, answer: run.answer });
    return { reason: ended.reason, summary: line, answer: run.answer, stats: { ...stats }, note };
  }

  /** A note for the model (a user-turn note) that the timeline shows too. */
  private tell(run: RequestRun, step: number, kind: NoteKind, text: string): void {
    this.conversation.addNote(run.request, text);
    this.note(step, kind, text);
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
  private closeCards(step: number, from: number, to: number, why: NotRunReason): void {
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

const NOT_RUN: Record<NotRunReason, string> = {
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
