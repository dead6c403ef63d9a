// One short hint added to a failed call's result (docs/agent.md, Hints). A hint costs
// tokens only when something goes wrong; each is sent at most twice per request, "fix one error at a
// time" once. The system prompt never changes, so its cached copy stays valid.
import type { ToolFormat } from '../model/tool-format.ts';
import { HINT_SENDS as LIMIT } from './limits.ts';

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

/** Which hint fits a failed call, if any. */
export function hintFor(tool: string, error: string): HintKind | null {
  if (/^unknown tool|needs "|must be (text|a whole number|true or false)|could not read the call/.test(error)) return 'call-format';
  if (tool === 'edit_file' && /was not found|matches \d+ places/.test(error)) return 'copy-old';
  if (tool === 'write_file' && /fragment/.test(error)) return null;
  return null;
}
