// The replay model with the real grammar: scripted invalid calls come out as a constrained model's would.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolCallGrammar } from '../../../../src/agent/grammar/tool-call-mask.ts';
import { replayBackend } from '../../../../src/agent/replay/replay-engine.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../../../../src/agent/tools/schemas.ts';
import { loadBundledQwen3Tokenizer } from '../../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../../src/model/chat-template.ts';
import type { ToolFormat } from '../../../../src/model/tool-format.ts';
import type { Tokenizer } from '../../../../src/model/tokenizer.ts';

let tok: Tokenizer;
// Loading the real 151,669-token vocabulary takes ~2 s alone and over 10 s (vitest's default hook timeout,
// which skipped every test here) on a loaded 2-core CI box: the hook gets its own bound.
beforeAll(async () => { tok = await loadBundledQwen3Tokenizer(); }, 120_000);

const templates = { xml: 'qwen3-coder', json: 'qwen3' } as const;

async function sample(format: ToolFormat, reply: string, maxNewTokens = 120) {
  const template = new ChatTemplate(readFileSync(new URL(`../../../fixtures/chat-templates/${templates[format]}.jinja`, import.meta.url), 'utf8'));
  const grammar = new ToolCallGrammar({ tokenizer: tok, format, tools: BUILTIN_TOOL_SCHEMAS });
  const { backend } = replayBackend({ tokenizer: tok, template, replies: [reply] });
  return backend.generate({ prompt: [1], maxNewTokens, stopTokens: tok.stopTokenIds(), constraint: grammar.constraint() });
}

const READ_INDEX_XML = '<tool_call>\n<function=read_file>\n<parameter=path>\nindex.html\n</parameter>\n</function>\n</tool_call>';
const READ_INDEX_JSON = '<tool_call>\n{"name": "read_file", "arguments": {"path": "index.html"}}\n</tool_call>';

describe('replay + grammar: invalid scripted calls are corrected', () => {
  it('a valid call passes untouched, text before it is free', async () => {
    const r = await sample('xml', `Let me <b>look</b>.\n${READ_INDEX_XML}`);
    expect(r).toMatchObject({ finish: 'stop-token', text: `Let me <b>look</b>.\n${READ_INDEX_XML}` });
  });

  it('XML: a misspelt tool name and parameter name become the declared ones', async () => {
    const r = await sample('xml', 'Reading.\n<tool_call>\n<function=readfile>\n<parameter=file_path>\nindex.html\n</parameter>\n</function>\n</tool_call>');
    expect(r).toMatchObject({ finish: 'stop-token', text: `Reading.\n${READ_INDEX_XML}` });
  });

  it('XML: a missing </function> is inserted before </tool_call>', async () => {
    const r = await sample('xml', '<tool_call>\n<function=read_file>\n<parameter=path>\nindex.html\n</parameter>\n</tool_call>');
    expect(r).toMatchObject({ finish: 'stop-token', text: READ_INDEX_XML });
  });

  it('XML: a call missing a required parameter cannot be closed', async () => {
    const r = await sample('xml', '<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n</function>\n</tool_call>', 36); // (under the point where garbage detection would end an answer fighting the grammar this long)
    expect(r.finish).toBe('cap');
    expect(r.text).toMatch(/^<tool_call>\n<function=write_file>\n<parameter=path>\na\.txt\n<\/parameter>\n<parameter=/);
    expect(r.ids).not.toContain(tok.special.toolCallEnd);
  });

  it('JSON: the tool name is held to the declared tools, and a missing closing brace is added', async () => {
    expect(await sample('json', '<tool_call>\n{"name": "read-file", "arguments": {"path": "index.html"}}\n</tool_call>'))
      .toMatchObject({ finish: 'stop-token', text: READ_INDEX_JSON });
    expect(await sample('json', '<tool_call>\n{"name": "read_file", "arguments": {"path": "index.html"}\n</tool_call>'))
      .toMatchObject({ finish: 'stop-token', text: READ_INDEX_JSON });
  });

  it('JSON: arguments are not held to the schema (only the name is)', async () => {
    const text = '<tool_call>\n{"name": "read_file", "arguments": {"file": "a", "extra": [1, {"b": true}]}}\n</tool_call>';
    expect(await sample('json', text)).toMatchObject({ finish: 'stop-token', text });
  });
});
