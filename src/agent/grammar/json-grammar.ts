// The JSON tool-call format (Qwen3), from just after <tool_call>:
//   \n{"name": "NAME", "arguments": {...}}\n</tool_call>
// Only NAME is held to the declared tools. The arguments are checked just enough to know where the
// object ends: strings (no raw control characters, valid escapes) and bracket nesting. Sampling is
// greedy for the whole call (the mask source sets `greedy`), which keeps small models' JSON well formed.
import type { ToolSchema } from '../../model/chat-types.ts';
import { stepAlternatives, TOOL_CALL_CLOSE, type Alternative, type CloseTag } from './alternatives.ts';
import type { GrammarSpec } from './dfa.ts';
import { CLASS } from './vocab-trie.ts';

export type JsonState =
  | { kind: 'alt'; ctx: 'open' | 'after' | 'close'; prefix: string }
  | { kind: 'args'; stack: string; mode: 'value' | 'string' | 'escape' } // stack of open '{' / '['
  | { kind: 'close' }
  | { kind: 'done' };

const MAX_DEPTH = 32;
const ESCAPES = new Set([...'"\\/bfnrtu'].map((c) => c.charCodeAt(0)));

export function jsonGrammar(tools: readonly ToolSchema[], closeTag: CloseTag): GrammarSpec<JsonState> {
  const closeState = (): JsonState => (closeTag === 'symbol' ? { kind: 'close' } : { kind: 'alt', ctx: 'close', prefix: '' });
  const options = (ctx: 'open' | 'after' | 'close'): Alternative<JsonState>[] => {
    if (ctx === 'open') {
      return tools.map((t) => ({ text: `\n{"name": ${JSON.stringify(t.name)}, "arguments": `, next: { kind: 'args', stack: '', mode: 'value' } }));
    }
    if (ctx === 'after') return [{ text: '}\n', next: closeState() }];
    return [{ text: TOOL_CALL_CLOSE, next: { kind: 'done' } }];
  };

  const args = (s: Extract<JsonState, { kind: 'args' }>, b: number): JsonState | null => {
    if (s.mode === 'escape') return ESCAPES.has(b) ? { ...s, mode: 'string' } : null;
    if (s.mode === 'string') {
      if (b === 0x22) return { ...s, mode: 'value' };
      if (b === 0x5c) return { ...s, mode: 'escape' };
      return b < 0x20 ? null : s;
    }
    if (s.stack === '') return b === 0x7b ? { ...s, stack: '{' } : null; // the arguments are an object
    if (b === 0x22) return { ...s, mode: 'string' };
    if (b === 0x7b || b === 0x5b) return s.stack.length < MAX_DEPTH ? { ...s, stack: s.stack + String.fromCharCode(b) } : null;
    if (b === 0x7d || b === 0x5d) {
      if (s.stack[s.stack.length - 1] !== (b === 0x7d ? '{' : '[')) return null;
      const stack = s.stack.slice(0, -1);
      return stack === '' ? { kind: 'alt', ctx: 'after', prefix: '' } : { ...s, stack };
    }
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return null;
    return s;
  };

  return {
    start: { kind: 'alt', ctx: 'open', prefix: '' },
    key(s) {
      switch (s.kind) {
        case 'alt': return `a|${s.ctx}|${s.prefix}`;
        case 'args': return `j|${s.stack}|${s.mode}`;
        default: return s.kind;
      }
    },
    byte(s, b) {
      if (s.kind === 'alt') return stepAlternatives(options(s.ctx), s.prefix, b, (prefix) => ({ kind: 'alt', ctx: s.ctx, prefix }));
      return s.kind === 'args' ? args(s, b) : null;
    },
    added(s, content) {
      return s.kind === 'close' && content === TOOL_CALL_CLOSE ? { kind: 'done' } : null;
    },
    loopClasses(s) {
      if (s.kind !== 'args') return 0;
      if (s.mode === 'string') return CLASS.quote | CLASS.backslash | CLASS.control | CLASS.newline;
      if (s.mode === 'value' && s.stack !== '') {
        return CLASS.quote | CLASS.braceOpen | CLASS.braceClose | CLASS.bracketOpen | CLASS.bracketClose | CLASS.control;
      }
      return 0;
    },
    done(s) {
      return s.kind === 'done';
    },
  };
}
