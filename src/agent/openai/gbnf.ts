// The call grammar as GBNF, for servers that constrain sampling with one (llama.cpp's `grammar`, vLLM's
// structured outputs, which read the same EBNF). It says what our own token grammar (src/agent/grammar)
// says, in characters: free text, then <tool_call> blocks in the model's format, with declared tool names
// (and, for XML, their parameter names). Free text may hold "<" anywhere except as the start of
// "<tool_call>", and an XML value may hold anything except a line starting with "</parameter>": both are
// written as "pieces after a separator that do not start with the literal", which GBNF's repetition can
// say without lookahead.
import type { ToolFormat } from '../../model/tool-format.ts';
import type { ToolSchema } from '../../model/chat-types.ts';

/** A GBNF string literal. */
export function lit(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** A negated character class for these characters. */
function notChars(chars: string): string {
  const esc = [...new Set(chars)].map((c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : /[\]\\^-]/.test(c) ? `\\${c}` : c)).join('');
  return `[^${esc}]`;
}

/**
 * Text after one `sep` that does not start with `literal` (which begins right after sep): empty, or it
 * leaves the literal at some character and then runs on to the next sep.
 */
function notStarting(literal: string, sep: string): string {
  let rule = '';
  for (let i = literal.length - 1; i >= 0; i--) {
    const c = literal[i]!;
    const leave = `${notChars(c + sep)} ${notChars(sep)}*`;
    rule = i === literal.length - 1 ? `( "" | ${leave} )` : `( "" | ${leave} | ${lit(c)} ${rule} )`;
  }
  return rule;
}

const JSON_RULES = [
  'json-object ::= "{" ws ( json-member ( ws "," ws json-member )* )? ws "}"',
  'json-member ::= json-string ws ":" ws json-value',
  'json-array ::= "[" ws ( json-value ( ws "," ws json-value )* )? ws "]"',
  'json-value ::= json-object | json-array | json-string | json-number | "true" | "false" | "null"',
  'json-string ::= "\\"" ( [^"\\\\\\x00-\\x1f] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] ) )* "\\""',
  'json-number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?',
  'ws ::= [ \\t\\n\\r]*',
];

/** GBNF for prose alone, never starting a <tool_call> block: the closing answer at the step limit. */
export function noCallGrammar(): string {
  return ['root ::= prose', proseRule()].join('\n') + '\n';
}

/** Free text: "<" anywhere except as the start of "<tool_call>". */
function proseRule(): string {
  return `prose ::= [^<]* ( "<" ${notStarting('tool_call>', '<')} )*`;
}

/** GBNF for an answer in `format` calling only `tools`. */
export function callGrammar(format: ToolFormat, tools: readonly ToolSchema[]): string {
  const names = tools.map((t) => lit(t.name)).join(' | ') || '""';
  const rules = [
    'root ::= prose ( call ws )*',
    proseRule(),
  ];
  if (format === 'json') {
    rules.push(`call ::= "<tool_call>" ${lit('\n{"name": "')} tool-name ${lit('", "arguments": ')} json-object ${lit('}\n')} "</tool_call>"`);
    rules.push(`tool-name ::= ${names}`, ...JSON_RULES);
  } else {
    rules.push(`call ::= "<tool_call>" ${lit('\n<function=')} ( ${tools.map((_, i) => `fn-${i}`).join(' | ') || '""'} ) ${lit('</function>\n')} "</tool_call>"`);
    tools.forEach((t, i) => {
      const params = Object.keys(t.parameters.properties).map(lit).join(' | ') || '""';
      rules.push(`fn-${i} ::= ${lit(`${t.name}>\n`)} ( ${lit('<parameter=')} ( ${params} ) ${lit('>\n')} value ${lit('\n</parameter>\n')} )*`);
    });
    rules.push(`value ::= [^\\n]* ( "\\n" ${notStarting('</parameter>', '\n')} )*`, 'ws ::= [ \\t\\n\\r]*');
  }
  return rules.join('\n') + '\n';
}
