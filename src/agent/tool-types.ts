// The contract every agent tool implements: file tools (src/agent/tools) and preview tools (src/preview).
// A tool's schema (ToolSchema) is the model layer's: the chat template renders it.
import type { ToolSchema } from '../model/chat-types.ts';

/** Typed outcome of one call: the text goes back to the model as the tool result. */
export type ToolOutcome =
  | {
      ok: true; text: string; changed?: boolean; page?: PageReport;  // changed: the project's files changed
      /**
       * The result as the repeat rules compare it (a read-only call giving "the same result"): the text
       * without what varies on its own, such as serve's load time. Absent: the text itself.
       */
      repeatText?: string;
    }
  | { ok: false; error: string; text?: string; page?: PageReport };

/** A port the agent served, as the serve call gave it: the session keeps these and restores them. */
export interface ServedPort {
  port: number;
  path: string;                // the serve target as given ('' = the project root, 'docs/about.html', …)
}

/**
 * What a served page reported (serve; preview_logs may set it too). The agent loop uses it for the
 * "clean serve then nothing changed = done" rule, the same-first-page-error stuck rule, and the
 * session's served ports. errors: the page's first errors in order; [] = none reported.
 */
export interface PageReport {
  port: number;
  path?: string;               // the folder served ('' = root)
  /** The page fired its load event within serve's wait. A clean serve needs it: "still loading, no errors yet" is not clean. */
  loaded: boolean;
  errors: string[];
}

export interface ToolContext {
  signal?: AbortSignal;
}

/** What a file-changing call would do to one file. before: null = the file does not exist yet. */
export interface FileChange {
  path: string;
  before: string | null;
  after: string;
}

/**
 * A file-changing call, planned before it runs: either it will write (the change, and apply() to do it)
 * or it will not (its final outcome: refused by a guard, or nothing to change), so it needs no approval.
 */
export type ToolPlan =
  | { kind: 'change'; change: FileChange; apply(): Promise<ToolOutcome> }
  | { kind: 'final'; outcome: ToolOutcome };

export interface Tool {
  schema: ToolSchema;
  /** Read-only tools may be repeated; writes are never run twice with the same arguments. */
  readOnly: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
  /** File-changing tools: what the call would do, without doing it (for "ask first" approvals). */
  plan?(args: Record<string, unknown>): Promise<ToolPlan>;
}
