// One short hint added to a failed call's result (docs/agent.md, Hints). A hint costs
// tokens only when something goes wrong; each is sent at most twice per request, "fix one error at a
// time" once. The system prompt never changes, so its cached copy stays valid.
import type { ToolFormat } from '../model/tool-format.ts';
import { HINT_SENDS as LIMIT, LONG_WRITE_LINES } from './limits.ts';

export type HintKind = keyof typeof LIMIT;

export function hintText(kind: HintKind, format: ToolFormat): string {
  switch (kind) {
    case 'call-format':
      return format === 'xml'
        ? 'Hint: call a tool exactly like this:\n<tool_call>\n<function=read_file>\n<parameter=path>\nindex.html\n</parameter>\n</function>\n</tool_call>'
        : 'Hint: call a tool exactly like this:\n<tool_call>\n{"name": "read_file", "arguments": {"path": "index.html"}}\n</tool_call>';
    case 'long-files':
      return 'Hint: write long files in parts: the first write_file with about 100 lines, then write_file with append: true for each next part.';
    case 'copy-old':
      return 'Hint: copy old exactly from read_file output (without the line numbers), a few whole lines that appear once.';
    case 'one-error':
      return 'Hint: fix one error at a time: the first one, then serve again.';
  }
}

/** Counts the hints sent in one request and refuses any past its limit. */
export class HintBudget {
  private sent = new Map<HintKind, number>();
  constructor(private readonly format: ToolFormat) {}

  /** The hint's text if it may still be sent this request (and counts it), else null. */
  take(kind: HintKind): string | null {
    const n = this.sent.get(kind) ?? 0;
    if (n >= LIMIT[kind]) return null;
    this.sent.set(kind, n + 1);
    return hintText(kind, this.format);
  }
}

/** Which hint fits a failed call, if any. A failed write of a long file gets the long-files hint. */
export function hintFor(call: { name: string; arguments: Record<string, unknown> }, error: string): HintKind | null {
  if (call.name === 'write_file' && countLines(call.arguments.content) > LONG_WRITE_LINES) return 'long-files';
  if (/^unknown tool|needs "|must be (text|a whole number|true or false)|could not read the call/.test(error)) return 'call-format';
  if (call.name === 'edit_file' && /was not found|matches \d+ places/.test(error)) return 'copy-old';
  return null;
}

/** An unreadable answer that was writing a long file: the long-files hint fits it better than the call format. */
export function unreadableHint(answer: string): HintKind {
  return /write_file/.test(answer) && countLines(answer) > LONG_WRITE_LINES ? 'long-files' : 'call-format';
}

function countLines(text: unknown): number {
  return typeof text === 'string' ? text.split('\n').length : 0;
}
