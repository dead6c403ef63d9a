// The typed event stream the UI renders (and the CLI prints). One request's events, in order:
// request, then per step: step, text deltas, call-start / call-args (live) / call, approval,
// result, notes; finally summary.
import type { EndReason, RequestStats } from './summary.ts';

export type AgentEvent =
  | { type: 'request'; request: number; text: string }
  | { type: 'step'; request: number; step: number; promptTokens: number; contextSize: number }
  | { type: 'text'; step: number; delta: string }
  | { type: 'call-start'; step: number; call: number }
  | { type: 'call-args'; step: number; call: number; raw: string }
  | { type: 'call'; step: number; call: number; name: string; arguments: Record<string, unknown>; repairs?: string[] }
  | { type: 'approval'; step: number; call: number; state: 'waiting' | 'approved' | 'rejected' }
  | { type: 'result'; step: number; call: number; name: string; ok: boolean; text: string; changed: boolean; skipped?: SkipReason }
  | { type: 'note'; step: number; kind: NoteKind; text: string }
  | { type: 'summary'; request: number; reason: EndReason; line: string; tip?: string; stats: RequestStats; answer: string };

/** Why a call's card closed without the call running (its result says so); 'repeat' = a write not run twice. */
export type SkipReason = 'repeat' | 'cut-off' | 'stopped' | 'unreadable' | 'model-failed' | 'limit';

/** Every kind of timeline note; a saved session's notes are checked against this list (session-validate.ts). */
export const NOTE_KINDS = ['compaction', 'cut-off', 'nudge', 'stuck-warning', 'end', 'format', 'limit', 'server', 'rerun'] as const;
export type NoteKind = typeof NOTE_KINDS[number];

export type AgentListener = (event: AgentEvent) => void;
