// `npm run -s parse-calls -- --format xml|json` reads one raw model reply on stdin and prints the calls
// found in it, after repairs, against the built-in tools: [{"name": "...", "arguments": {...}}].
// With --repairs each call also lists what was mended to read it ("repairs": [...], empty when clean).
import { parseArgs } from 'node:util';
import { parseToolCalls } from '../src/agent/parse/index.ts';
import { repairCall } from '../src/agent/repairs.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../src/agent/tools/schemas.ts';

const { values } = parseArgs({ options: { format: { type: 'string', default: 'xml' }, repairs: { type: 'boolean', default: false }, help: { type: 'boolean' } } });
if (values.help) {
  console.log('usage: npm run -s parse-calls -- --format xml|json [--repairs] < reply.txt');
  process.exit(0);
}
if (values.format !== 'xml' && values.format !== 'json') {
  console.error(`parse-calls: --format must be xml or json, not "${values.format}"`);
  process.exit(2);
}
const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const reply = Buffer.concat(chunks).toString('utf8');
const { calls } = parseToolCalls(reply, { format: values.format, tools: BUILTIN_TOOL_SCHEMAS });
const repaired = calls.map((c) => repairCall(c, BUILTIN_TOOL_SCHEMAS))
  .map((c) => (values.repairs ? { name: c.name, arguments: c.arguments, repairs: c.repairs } : { name: c.name, arguments: c.arguments }));
console.log(JSON.stringify(repaired));
