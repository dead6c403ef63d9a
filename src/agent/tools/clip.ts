// Tool results are cut to LIMITS.resultChars keeping the start and the end (errors are often at the
// end), and framed as data: text that the tokenizer would read as a control token (<|im_end|>, <tool_call>,
// </tool_response>…) gets a zero-width space after its '<' so a file can never end the result early or
// pose as a turn of the conversation.
import { TOOL_LIMITS as LIMITS } from '../limits.ts';

const CONTROL_TAGS = /<(\|[a-z_]+\|>|\/?(?:tool_call|tool_response|think|function|parameter)\b)/gi;
export const ZERO_WIDTH_SPACE = '\u200b';

/** Makes text safe to place inside a tool result or a user turn. */
export function neutralizeControlTokens(text: string): string {
  return text.replace(CONTROL_TAGS, `<${ZERO_WIDTH_SPACE}$1`);
}

/** Undoes neutralizeControlTokens (the model may copy escaped text into edit_file's old). */
export function restoreControlTokens(text: string): string {
  return text.split(`<${ZERO_WIDTH_SPACE}`).join('<');
}

/** Cuts text over max characters to its start and end, saying how much was left out and where. */
export function clipMiddle(text: string, max: number = LIMITS.resultChars): string {
  if (text.length <= max) return text;
  const cut = (n: number) => `\n… (${n} characters cut from the middle; ask for less at a time) …\n`;
  const room = max - cut(text.length).length;
  let head = Math.ceil(room / 2);
  let tail = room - head;
  // Prefer cutting at line ends when one is near.
  const headNl = text.lastIndexOf('\n', head);
  if (headNl > head * 0.8) head = headNl + 1;
  const tailStart = text.length - tail;
  const tailNl = text.indexOf('\n', tailStart);
  if (tailNl >= 0 && tailNl - tailStart < tail * 0.2) tail = text.length - (tailNl + 1);
  return text.slice(0, head) + cut(text.length - head - tail) + text.slice(text.length - tail);
}

/** What goes back to the model for any tool result: clipped, then neutralized. */
export function frameToolResult(text: string, max: number = LIMITS.resultChars): string {
  return clipMiddle(neutralizeControlTokens(text), max);
}
