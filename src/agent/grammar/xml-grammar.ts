// The XML tool-call format (Qwen3-Coder, Qwen3.5), from just after <tool_call>:
//   \n<function=NAME>\n  then for each parameter  <parameter=P>\nVALUE\n</parameter>\n  then  </function>\n</tool_call>
// NAME is a declared tool; P one of its parameters not given yet; </function> only once every required
// parameter is there. VALUE is free text up to "\n</parameter>" — where a value ends is ONE rule the
// parser and the live view use too (parse/xml-value.ts), so "</parameter>" or "<parameter=x>" text in a
// value is kept whole by all three. Added tokens cannot appear in a value, so the </tool_call> token only
// ever closes the call; the text "</tool_call>" (ordinary tokens) may, and stays there (parse/blocks.ts).
import type { ToolSchema } from '../../model/chat-types.ts';
import { stepAlternatives, TOOL_CALL_CLOSE, type Alternative, type CloseTag } from './alternatives.ts';
import type { GrammarSpec } from './dfa.ts';
import { CLASS } from './vocab-trie.ts';
import { VALUE_END, VALUE_START } from '../parse/xml-value.ts';

type Ctx = { kind: 'open' } | { kind: 'fn'; tool: number; used: number; newline: boolean } | { kind: 'close' };

export type XmlState =
  | { kind: 'alt'; ctx: Ctx; prefix: string }       // reading one of the literals of ctx
  | { kind: 'value'; tool: number; used: number; k: number } // k = bytes of "\n</parameter>" matched
  | { kind: 'close' }                                // expects the </tool_call> token
  | { kind: 'done' };

/**
 * The newline that opens a value is also the first byte of VALUE_END, as the parser reads it: a value
 * that begins with "</parameter>" is empty and closed (parse/xml-value.ts), not text.
 */
const VALUE_OPEN_MATCHED = VALUE_END.startsWith(VALUE_START) ? VALUE_START.length : 0;

export function xmlGrammar(tools: readonly ToolSchema[], closeTag: CloseTag): GrammarSpec<XmlState> {
  const params = tools.map((t) => Object.keys(t.parameters.properties));
  const required = tools.map((t, i) => t.parameters.required.reduce((m, p) => m | (1 << params[i].indexOf(p)), 0));
  const closeState = (): XmlState => (closeTag === 'symbol' ? { kind: 'close' } : { kind: 'alt', ctx: { kind: 'close' }, prefix: '' });

  const options = (ctx: Ctx): Alternative<XmlState>[] => {
    if (ctx.kind === 'open') {
      return tools.map((t, i) => ({ text: `\n<function=${t.name}>\n`, next: { kind: 'alt', ctx: { kind: 'fn', tool: i, used: 0, newline: false }, prefix: '' } }));
    }
    if (ctx.kind === 'close') return [{ text: TOOL_CALL_CLOSE, next: { kind: 'done' } }];
    const lead = ctx.newline ? '\n' : '';
    const out: Alternative<XmlState>[] = [];
    params[ctx.tool].forEach((p, j) => {
      if (ctx.used & (1 << j)) return;
      out.push({ text: `${lead}<parameter=${p}>${VALUE_START}`, next: { kind: 'value', tool: ctx.tool, used: ctx.used | (1 << j), k: VALUE_OPEN_MATCHED } });
    });
    if ((ctx.used & required[ctx.tool]) === required[ctx.tool]) out.push({ text: `${lead}</function>\n`, next: closeState() });
    return out;
  };

  return {
    start: { kind: 'alt', ctx: { kind: 'open' }, prefix: '' },
    key(s) {
      switch (s.kind) {
        case 'alt': return s.ctx.kind === 'fn' ? `a|fn|${s.ctx.tool}|${s.ctx.used}|${s.ctx.newline ? 1 : 0}|${s.prefix}` : `a|${s.ctx.kind}|${s.prefix}`;
        case 'value': return `v|${s.tool}|${s.used}|${s.k}`;
        default: return s.kind;
      }
    },
    byte(s, b) {
      if (s.kind === 'alt') return stepAlternatives(options(s.ctx), s.prefix, b, (prefix) => ({ kind: 'alt', ctx: s.ctx, prefix }));
      if (s.kind !== 'value') return null;
      if (VALUE_END.charCodeAt(s.k) === b) {
        if (s.k + 1 === VALUE_END.length) return { kind: 'alt', ctx: { kind: 'fn', tool: s.tool, used: s.used, newline: true }, prefix: '' };
        return { ...s, k: s.k + 1 };
      }
      return { ...s, k: b === 0x0a ? 1 : 0 };
    },
    added(s, content) {
      return s.kind === 'close' && content === TOOL_CALL_CLOSE ? { kind: 'done' } : null;
    },
    loopClasses(s) {
      return s.kind === 'value' && s.k === 0 ? CLASS.newline : 0;
    },
    done(s) {
      return s.kind === 'done';
    },
  };
}
