// tool_choice as the call grammar (src/agent/grammar): the same per-token Constraint the agent samples
// under, chosen per request:
//   auto      the agent's grammar: free text, and any <tool_call> held to the tools' format
//   none      the no-call grammar: every token but <tool_call>
//   required  the first token must be <tool_call> (forced, greedy), then the grammar holds the call
//   function  the same, over a grammar of that one tool (its name is the only one the call can write)
// Thinking is off in the template (it ends the prompt with an empty think block), so the answer's first
// token is where a call begins.
import type { Constraint } from '../model/generate-types.ts';
import type { TokenConstraint } from '../model/sampling-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import type { ToolSchema } from '../model/chat-types.ts';
import { ToolCallGrammar } from '../agent/grammar/tool-call-mask.ts';
import type { ToolChoice } from './chat-body.ts';
import { API_LIMITS } from './limits.ts';

/** The grammars of the tools lists seen lately (an editor sends the same list on every request). */
export class GrammarCache {
  private readonly grammars = new Map<string, ToolCallGrammar>();
  constructor(private readonly tokenizer: Tokenizer, readonly format: ToolFormat) {}

  grammarFor(tools: readonly ToolSchema[]): ToolCallGrammar {
    const key = JSON.stringify(tools);
    let g = this.grammars.get(key);
    if (g) {
      this.grammars.delete(key);   // most recent last
    } else {
      g = new ToolCallGrammar({ tokenizer: this.tokenizer, format: this.format, tools });
      if (this.grammars.size >= API_LIMITS.grammarCache) this.grammars.delete(this.grammars.keys().next().value!);
    }
    this.grammars.set(key, g);
    return g;
  }

  /** The Constraint of one answer under `choice`; undefined when the request declares no tools (free text). */
  constraintFor(tools: readonly ToolSchema[], choice: ToolChoice): Constraint | undefined {
    if (tools.length === 0) return undefined;
    if (choice.kind === 'none') return this.grammarFor(tools).noCalls();
    if (choice.kind === 'auto') return this.grammarFor(tools).constraint();
    const held = choice.kind === 'function' ? tools.filter((t) => t.name === choice.name) : tools;
    return callFirst(this.grammarFor(held).constraint(), this.tokenizer);
  }
}

/**
 * `inner` with its first token forced to <tool_call> (greedy: the sampler takes the one allowed token). No
 * lookahead: speculation is off for such an answer (the forced token is not a draft's to guess).
 */
export function callFirst(inner: Constraint, tokenizer: Tokenizer): Constraint {
  const open = tokenizer.special.toolCall;
  if (open === undefined) throw new Error('this tokenizer has no <tool_call> token: calls cannot be required');
  const bits = new Uint32Array((open >>> 5) + 1);
  bits[open >>> 5] = (1 << (open & 31)) >>> 0;
  const first: TokenConstraint = { bits, greedy: true };
  return (soFar) => {
    const next = inner(soFar);        // told every token, the forced one included
    return soFar.length === 0 ? first : next;
  };
}
