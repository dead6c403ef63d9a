// Which tool-call format a model was trained on, read from its own chat template (docs/platform.md):
//   json: <tool_call>\n{"name": "read_file", "arguments": {"path": "index.html"}}\n</tool_call>
//   xml:  <tool_call>\n<function=read_file>\n<parameter=path>\nindex.html\n</parameter>\n</function>\n</tool_call>

export type ToolFormat = 'json' | 'xml';

/** The chat template shows neither call format: the agent cannot tell the model how to call tools. */
export class UnknownToolFormatError extends Error {
  override name = 'UnknownToolFormatError';
  readonly code = 'unknown-tool-format';
  constructor(where: string) {
    super(`${where}: the chat template shows no tool-call format (neither {"name": <function-name>, "arguments": ...} nor <function=...><parameter=...>)`);
  }
}

/** JSON if the template shows `{"name": <function-name>, "arguments": <args-json-object>}`; XML if it has `<function=` and `<parameter=`. */
export function detectToolFormat(templateText: string, where = 'chat template'): ToolFormat {
  // The template source escapes quotes inside Jinja strings: accept both spellings.
  const text = templateText.replace(/\\"/g, '"');
  if (text.includes('<function=') && text.includes('<parameter=')) return 'xml';
  if (/\{"name": <function-name>, "arguments": <args-json-object>\}/.test(text)) return 'json';
  throw new UnknownToolFormatError(where);
}

export interface ToolCallText {
  name: string;
  arguments: Record<string, unknown>;
}

/** A value as the XML format writes it: strings as they are, anything else as JSON. */
export function xmlParameterText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * One call exactly as the model's template writes it, from `<tool_call>` to `</tool_call>`
 * (used for hints that show the exact call format, and for scripted replies in tests).
 */
export function renderToolCall(format: ToolFormat, call: ToolCallText): string {
  if (format === 'json') {
    return `<tool_call>\n${pythonJson({ name: call.name, arguments: call.arguments })}\n</tool_call>`;
  }
  let out = `<tool_call>\n<function=${call.name}>\n`;
  for (const [key, value] of Object.entries(call.arguments)) {
    out += `<parameter=${key}>\n${xmlParameterText(value)}\n</parameter>\n`;
  }
  return `${out}</function>\n</tool_call>`;
}

/** JSON as Python's json.dumps writes it (and the templates' tojson): ", " and ": " separators, keys in order. */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}
