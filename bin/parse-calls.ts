// `npm run -s parse-calls -- --format xml|json` reads one raw model reply on stdin and prints the calls
// found in it, after repairs, against the built-in tools: [{"name": "...", "arguments": {...}}].
// With --repairs each call also lists what was mended to read it ("repairs": [...], empty when clean).
// --tools FILE reads the tools from a JSON file instead (a list of {name, description, parameters}, or
// OpenAI's [{"type": "function", "function": {...}}]), so a corpus with other tool names is checked as is.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ToolSchema } from '../src/model/chat-types.ts';
import { parseToolCalls } from '../src/agent/parse/index.ts';
import { repairCall } from '../src/agent/repairs.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../src/agent/tools/schemas.ts';

const { values } = parseArgs({ options: { format: { type: 'string', default: 'xml' }, repairs: { type: 'boolean', default: false }, tools: { type: 'string' }, help: { type: 'boolean' } } });
if (values.help) {
  console.log('usage: npm run -s parse-calls -- --format xml|json [--repairs] [--tools FILE] < reply.txt');
  process.exit(0);
}
const tools = values.tools === undefined ? BUILTIN_TOOL_SCHEMAS : readTools(values.tools);

/** The tools in a JSON file; a file that is not such a list is a named error (exit 2). */
function readTools(file: string): ToolSchema[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`parse-calls: --tools ${file}: ${(e as Error).message}`);
    process.exit(2);
  }
  const list = Array.isArray(value) ? value.map((t) => (t && typeof t === 'object' && 'function' in t ? (t as { function: unknown }).function : t)) : null;
  const ok = list?.every((t) => {
    const tool = t as Partial<ToolSchema> | null;
    return typeof tool?.name === 'string' && typeof tool.parameters === 'object' && tool.parameters !== null && typeof tool.parameters.properties === 'object';
  });
  if (!list || !ok) {
    console.error(`parse-calls: --tools ${file}: expected a JSON list of tools, each {"name", "parameters": {"properties": {...}}}`);
    process.exit(2);
  }
  return (list as ToolSchema[]).map((t) => ({ ...t, description: t.description ?? '', parameters: { ...t.parameters, required: t.parameters.required ?? [] } }));
}
if (values.format !== 'xml' && values.format !== 'json') {
  console.error(`parse-calls: --format must be xml or json, not "${values.format}"`);
  process.exit(2);
}
const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const reply = Buffer.concat(chunks).toString('utf8');
const { calls } = parseToolCalls(reply, { format: values.format, tools });
const repaired = calls.map((c) => repairCall(c, tools))
  .map((c) => (values.repairs ? { name: c.name, arguments: c.arguments, repairs: c.repairs } : { name: c.name, arguments: c.arguments }));
console.log(JSON.stringify(repaired));
