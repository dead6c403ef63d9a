// XML-style calls in every spelling open models write: <function=NAME>, <function name="NAME">,
// <invoke name="NAME">; parameters as <parameter=P>, <parameter name="P">; or JSON arguments inside.
import { callsFromJsonText, parseLooseJson } from './json-calls.ts';
import type { ParsedCall } from './types.ts';

const OPEN = /<(function|invoke)(?:=\s*["']?([\w.-]+)["']?|\s+name\s*=\s*["']([\w.-]+)["'])\s*>/g;
const PARAM = /<parameter(?:=\s*["']?([\w.-]+)["']?|\s+name\s*=\s*["']([\w.-]+)["'])\s*>([\s\S]*?)(?:<\/parameter>|(?=<parameter[\s=])|(?=<\/(?:function|invoke)>)|$)/g;

/** A parameter value as written between its tags: one newline each side belongs to the format. */
function valueText(raw: string): string {
  return raw.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
}

/** Every XML-style call in the text, in order. */
export function xmlCalls(text: string): ParsedCall[] {
  const calls: ParsedCall[] = [];
  const opens = [...text.matchAll(OPEN)];
  opens.forEach((m, k) => {
    const tag = m[1];
    const name = m[2] ?? m[3];
    const bodyStart = m.index! + m[0].length;
    const closeAt = text.indexOf(`</${tag}>`, bodyStart);
    const nextOpen = k + 1 < opens.length ? opens[k + 1].index! : text.length;
    const bodyEnd = closeAt >= 0 && closeAt < nextOpen ? closeAt : nextOpen;
    const body = text.slice(bodyStart, bodyEnd);
    const raw = text.slice(m.index!, closeAt >= 0 && closeAt < nextOpen ? closeAt + tag.length + 3 : bodyEnd);
    const args: Record<string, unknown> = {};
    let found = false;
    for (const p of body.matchAll(PARAM)) {
      const key = p[1] ?? p[2];
      if (!(key in args)) args[key] = valueText(p[3]);
      found = true;
    }
    if (!found && body.trim().length > 0) {
      // JSON arguments inside <function=NAME> ... </function>
      const trimmed = body.trim();
      const value = parseLooseJson(trimmed.replace(/^```[\w-]*\s*\n?|\n?```$/g, ''));
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        const inner = callsFromJsonText(trimmed, 'xml+json')[0];
        Object.assign(args, inner && inner.name === name ? inner.arguments : value);
      }
    }
    calls.push({ name, arguments: args, via: tag === 'invoke' ? 'invoke' : 'xml', raw });
  });
  return calls;
}
