// A scripted model for an eval task: the replies a correct agent would give to write `files` — each
// file with write_file (longer ones in parts of 80 lines with append: true, as the system prompt asks),
// then serve, then a short answer. Replies are in the call format of the model's chat template.
import type { ToolFormat } from '../src/model/tool-format.ts';

const PART_LINES = 80;

export function callText(format: ToolFormat, name: string, args: Record<string, unknown>): string {
  if (format === 'json') return `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
  const params = Object.entries(args).map(([k, v]) => `<parameter=${k}>\n${String(v)}\n</parameter>\n`).join('');
  return `<tool_call>\n<function=${name}>\n${params}</function>\n</tool_call>`;
}

export function repliesWriting(files: Record<string, string>, format: ToolFormat): string[] {
  const replies: string[] = [];
  for (const [path, content] of Object.entries(files)) {
    const lines = content.split(/(?<=\n)/);
    for (let at = 0; at < lines.length; at += PART_LINES) {
      const part = lines.slice(at, at + PART_LINES).join('');
      const args: Record<string, unknown> = { path, content: part };
      if (at > 0) args.append = true;
      replies.push(callText(format, 'write_file', args));
    }
  }
  replies.push(callText(format, 'serve', {}));
  replies.push('Done: the app is written and served.');
  return replies;
}
