// Turn texts in the model's own chat template, found by rendering small conversations and taking the
// differences, so the agent never hard-codes a template. The conversation is kept as exact token
// segments (conversation.ts): the opening (system prompt + tools), user turns, tool-result turns, and
// assistant turns holding the very tokens the model sampled. Rendering each new turn on its own keeps the
// prompt append-only, so the engine reuses its KV cache: step N+1 computes only the new turn.
import type { Backend } from './backend.ts';
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';

const IM_START = '<|im_start|>';
const MARK = '\u2063A\u2063';

/** The template did not render in the shape the agent relies on (a prefix-stable list of turns). */
export class TemplateShapeError extends Error {
  override name = 'TemplateShapeError';
  constructor(detail: string) {
    super(`the chat template does not render turns the agent can split: ${detail}`);
  }
}

export interface ResultForTurn { name: string; content: string }

export class TurnRenderer {
  /** "<|im_start|>assistant\n<think>\n\n</think>\n\n" for Qwen3 with thinking off. */
  readonly generationPrompt: string;
  /** System prompt + tools, up to the first user turn. */
  readonly opening: string;
  /** What closes an assistant turn after its content: "<|im_end|>\n". */
  readonly assistantClose: string;

  constructor(private readonly backend: Backend, readonly system: string, readonly tools: ToolSchema[]) {
    const base = this.render([{ role: 'user', content: 'a' }]);
    const gen = base.lastIndexOf(`${IM_START}assistant`);
    if (gen < 0) throw new TemplateShapeError('no assistant generation prompt at the end');
    this.generationPrompt = base.slice(gen);
    const user = base.lastIndexOf(IM_START, gen - 1);
    if (user <= 0) throw new TemplateShapeError('no user turn after the system prompt');
    this.opening = base.slice(0, user);
    const withAnswer = this.render([{ role: 'user', content: 'a' }, { role: 'assistant', content: MARK }, { role: 'user', content: 'b' }]);
    const at = withAnswer.indexOf(MARK);
    const next = withAnswer.indexOf(IM_START, at);
    if (at < 0 || next < 0) throw new TemplateShapeError('an assistant turn is not followed by the next turn');
    this.assistantClose = withAnswer.slice(at + MARK.length, next);
  }

  private render(messages: ChatMessage[]): string {
    return this.backend.render([{ role: 'system', content: this.system }, ...messages], this.tools);
  }

  /** The text of one user turn, e.g. "<|im_start|>user\nMake a game<|im_end|>\n". */
  userTurn(content: string): string {
    const r = this.render([{ role: 'user', content }]);
    if (!r.startsWith(this.opening) || !r.endsWith(this.generationPrompt)) throw new TemplateShapeError('a user turn changes the opening');
    return r.slice(this.opening.length, r.length - this.generationPrompt.length);
  }

  /** The turn(s) carrying tool results (Qwen: one user turn of <tool_response> blocks). */
  resultsTurn(results: ResultForTurn[]): string {
    const calls = results.map((r) => ({ name: r.name, arguments: {} }));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: '', tool_calls: calls },
      ...results.map((r): ChatMessage => ({ role: 'tool', name: r.name, content: r.content })),
    ];
    const r = this.render(messages);
    if (!r.endsWith(this.generationPrompt)) throw new TemplateShapeError('tool results do not end at the generation prompt');
    const body = r.slice(0, r.length - this.generationPrompt.length);
    const assistant = body.lastIndexOf(`${IM_START}assistant`);
    const start = body.indexOf(IM_START, assistant + 1);
    if (assistant < 0 || start < 0) throw new TemplateShapeError('tool results do not follow the assistant turn');
    return body.slice(start);
  }

  /**
   * An assistant turn with the given prose and tool calls as the template writes them (for an answer
   * whose written content compaction cleared): generation prompt + body + close, like a sampled turn.
   */
  assistantWithCalls(prose: string, calls: { name: string; arguments: Record<string, unknown> }[]): string {
    const after = this.userTurn('b');
    const r = this.render([{ role: 'user', content: 'a' }, { role: 'assistant', content: prose, tool_calls: calls }, { role: 'user', content: 'b' }]);
    const head = `${IM_START}assistant\n`;
    const start = r.indexOf(head, this.opening.length);
    const end = r.lastIndexOf(this.assistantClose + after);
    if (start < 0 || end < start) throw new TemplateShapeError('an assistant turn with tool calls cannot be split out');
    return this.generationPrompt + r.slice(start + head.length, end) + this.assistantClose;
  }

  /**
   * What the template writes inside one user turn: "<|im_start|>user\nX<|im_end|>\n" -> X. Null when
   * `turn` is not wrapped as a user turn is. (For a server that renders the turns itself.)
   */
  userContentOf(turn: string): string | null {
    const probe = this.userTurn(MARK);
    const at = probe.indexOf(MARK);
    const head = probe.slice(0, at);
    const tail = probe.slice(at + MARK.length);
    if (at < 0 || turn.length < head.length + tail.length || !turn.startsWith(head) || !turn.endsWith(tail)) return null;
    return turn.slice(head.length, turn.length - tail.length);
  }

  /**
   * What the template writes inside the system turn, tools included (Qwen: the prompt, then "# Tools" and
   * the call format). Null when the template puts the tools anywhere but inside the system turn.
   */
  systemContent(): string | null {
    const bare = this.backend.render([{ role: 'system', content: MARK }, { role: 'user', content: 'a' }], []);
    const at = bare.indexOf(MARK);
    const user = bare.indexOf(IM_START, at);
    if (at < 0 || user < 0) return null;
    const head = bare.slice(0, at);
    const tail = bare.slice(at + MARK.length, user);
    const o = this.opening;
    if (o.length < head.length + tail.length || !o.startsWith(head) || !o.endsWith(tail)) return null;
    return o.slice(head.length, o.length - tail.length);
  }

  /** The content of an assistant turn with these calls, as the template writes it ("prose\n<tool_call>…"). */
  assistantContentWithCalls(prose: string, calls: { name: string; arguments: Record<string, unknown> }[]): string {
    const turn = this.assistantWithCalls(prose, calls);
    return turn.slice(this.generationPrompt.length, turn.length - this.assistantClose.length);
  }

  /** The full text of an assistant turn with the given content (for turns the agent writes itself). */
  assistantTurn(content: string): string {
    return this.generationPrompt + content + this.assistantClose;
  }
}
