// Runs one parsed call for the loop: approval ("ask first" edits), the no-repeat rules, hints, and the
// framing of the result as data. Returns what the conversation records and what stuck detection needs.
import type { AgentEvent } from './events.ts';
import type { CallRecord } from './conversation.ts';
import { describeCall } from './conversation.ts';
import type { HintBudget, HintKind } from './hints.ts';
import { hintFor } from './hints.ts';
import type { StepCall } from './stuck.ts';
import type { FileChange, PageReport, ToolOutcome } from './tool-types.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { ParsedCall } from './parse/types.ts';
import { frameToolResult } from './tools/clip.ts';
import { TOOL_LIMITS as LIMITS } from './limits.ts';

/** What runs: a parsed call's name and (repaired) arguments, and what was mended to get them. */
export type CallToRun = Pick<ParsedCall, 'name' | 'arguments'> & {
  /** What was mended to read and repair it (src/agent/repairs.ts); absent for a clean call. */
  repairs?: readonly string[];
};

export interface ApprovalRequest {
  step: number; call: number; name: string; arguments: Record<string, unknown>;
  /** What the call will do to the file, as the tool itself planned it (absent for a tool that cannot plan). */
  change?: FileChange;
}

/** What one request remembers about its calls, for the repeat rules. */
export class CallMemory {
  changes = 0;                 // bumped on every change to the project's files
  private readOnly = new Map<string, { text: string; changes: number }>();
  private writes = new Map<string, { step: number; error: string | null; changes: number }>();

  /** A read-only call repeated with nothing changed and the same result: a repeat. */
  sameReadResult(key: string, text: string): boolean {
    const prev = this.readOnly.get(key);
    const same = prev !== undefined && prev.changes === this.changes && prev.text === text;
    this.readOnly.set(key, { text, changes: this.changes });
    return same;
  }
  /**
   * The same write or edit run before with nothing changed in the project since (by any call or by
   * hand): a repeat. After a change it may be meant (write A, edit to B, write A again) and runs.
   */
  previousWrite(key: string): { step: number; error: string | null } | undefined {
    const prev = this.writes.get(key);
    return prev && prev.changes === this.changes ? prev : undefined;
  }
  /** Called once the write's own change is counted. error: the first line of its error, null when it succeeded. */
  rememberWrite(key: string, step: number, error: string | null): void {
    this.writes.set(key, { step, error, changes: this.changes });
  }
}

export interface CallEnv {
  tools: ToolRegistry;
  hints: HintBudget;
  memory: CallMemory;
  askFirst: boolean;
  approve: (request: ApprovalRequest) => Promise<boolean>;
  emit: (event: AgentEvent) => void;
  signal?: AbortSignal;
}

export interface CallRun {
  record: CallRecord;
  stall: StepCall;
  page?: PageReport;
  /** CallMemory.changes before this call ran (a page check compares it with the previous check's). */
  changesBefore: number;
  /** The user (or Stop) rejected it at its approval: it has a result but did not run. */
  rejected?: true;
}

const WRITE_TOOLS = new Set(['write_file', 'edit_file']);

/** Canonical key of a call: name + arguments with sorted keys. */
export function callKey(call: CallToRun): string {
  const sorted = Object.keys(call.arguments).sort().map((k) => [k, call.arguments[k]]);
  return `${call.name} ${JSON.stringify(sorted)}`;
}

export async function runCall(call: CallToRun, step: number, id: number, env: CallEnv): Promise<CallRun> {
  const key = callKey(call);
  const changesBefore = env.memory.changes;
  const label = describeCall(call);
  const tool = env.tools.get(call.name);
  const finish = (outcome: ToolOutcome, stalled: boolean, extra: { hint?: HintKind | null; skipped?: 'repeat'; why?: string } = {}): CallRun => {
    const body = outcome.ok ? outcome.text : `Error: ${outcome.error}${outcome.text ? '\n' + outcome.text : ''}`;
    const hint = extra.hint ? env.hints.take(extra.hint) : null;
    // The hint is ours and shows the real call tokens, so it is added after the result is framed as data.
    const content = hint ? `${frameToolResult(body, LIMITS.resultChars - hint.length - 1)}\n${hint}` : frameToolResult(body);
    const changed = outcome.ok && outcome.changed === true;
    if (changed) env.memory.changes++;
    const record: CallRecord = { name: call.name, arguments: call.arguments, ok: outcome.ok, changed, content };
    if (outcome.page) record.port = outcome.page.port;
    const event: AgentEvent = { type: 'result', step, call: id, name: call.name, ok: outcome.ok, text: content, changed };
    if (extra.skipped) event.skipped = extra.skipped;
    env.emit(event);
    const error = extra.why ?? (outcome.ok ? 'the same result again' : outcome.error.split('\n')[0]!);
    const run: CallRun = { record, stall: { key, label, stalled, error }, changesBefore };
    if (outcome.page) run.page = outcome.page;
    return run;
  };

  if (!tool) {
    const names = env.tools.schemas().map((s) => s.name).join(', ');
    return finish({ ok: false, error: `unknown tool ${JSON.stringify(call.name)}; the tools are: ${names}` }, true, { hint: 'call-format' });
  }
  const previous = WRITE_TOOLS.has(call.name) ? env.memory.previousWrite(key) : undefined;
  if (previous) {
    const text = `not run again: this exact ${call.name} already ran at step ${previous.step}` +
      `${previous.error === null ? '' : ` and failed: ${previous.error}`}. Serve the app to check it, fix something else, or finish.`;
    return finish({ ok: true, changed: false, text }, true, { skipped: 'repeat', why: previous.error ?? `it already ran at step ${previous.step}` });
  }
  let outcome: ToolOutcome | undefined;
  try {
    if (env.askFirst && WRITE_TOOLS.has(call.name)) {
      // Planned first: a call the guards refuse, or one that changes nothing, needs no approval.
      const plan = tool.plan ? await tool.plan(call.arguments) : undefined;
      if (plan?.kind === 'final') {
        outcome = plan.outcome;
      } else {
        env.emit({ type: 'approval', step, call: id, state: 'waiting' });
        const request: ApprovalRequest = { step, call: id, name: call.name, arguments: call.arguments };
        if (plan) request.change = plan.change;
        const approved = await env.approve(request);
        env.emit({ type: 'approval', step, call: id, state: approved ? 'approved' : 'rejected' });
        if (!approved) {
          return { ...finish({ ok: false, error: `the user rejected this ${call.name}; the file was not changed. Ask or try another way.` }, false), rejected: true };
        }
      }
    }
    outcome ??= await tool.run(call.arguments, env.signal ? { signal: env.signal } : {});
  } catch (e) {
    outcome = { ok: false, error: `${call.name} failed: ${(e as Error)?.message ?? String(e)}` };
  }
  if (WRITE_TOOLS.has(call.name)) {
    const run = outcome.ok ? finish(outcome, false) : finish(outcome, true, { hint: hintFor(call, outcome.error) });
    env.memory.rememberWrite(key, step, outcome.ok ? null : outcome.error.split('\n')[0]!);
    return run;
  }
  if (call.name === 'serve' && outcome.ok && !outcome.page) outcome = { ...outcome, page: pageFromText(outcome.text) };
  if (!outcome.ok) return finish(outcome, true, { hint: hintFor(call, outcome.error) });
  const repeat = tool.readOnly && env.memory.sameReadResult(key, outcome.repeatText ?? outcome.text);
  const pageErrors = outcome.page?.errors.length ?? 0;
  return finish(outcome, repeat, { hint: pageErrors > 1 ? 'one-error' : null });
}

/**
 * For a serve tool that does not fill `page`: the port named in its text, whether the page loaded (not
 * when it says "still loading"), and its errors — none when the first line says "no errors", else the
 * lines after the first (or the first, if it is an error).
 */
export function pageFromText(text: string): PageReport {
  const port = Number(/:(\d{2,5})\b/.exec(text)?.[1] ?? 5173);
  const [head = '', ...rest] = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const loaded = !/still loading|not loaded|did not load/i.test(head);
  if (/\bno errors\b/i.test(head)) return { port, loaded, errors: [] };
  const errors = rest.length > 0 ? rest : /error|exception|failed|404/i.test(head) ? [head] : [];
  return { port, loaded, errors };
}
