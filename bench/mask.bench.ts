// Grammar-constrained tool calls over the real 151,669-token Qwen3 vocabulary: how long the mask for one
// token takes (targets: median ≤ 20 µs) and how long a grammar takes to start (target ≤ 200 ms).
// "cold" = a fresh grammar, masks computed as the call goes; "warm" = the same call again (cached masks).
import { ToolCallGrammar } from '../src/agent/grammar/tool-call-mask.ts';
import { buildVocabIndex, vocabIndexFor } from '../src/agent/grammar/vocab-trie.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../src/agent/tools/schemas.ts';
import { loadBundledQwen3Tokenizer } from '../src/model/bundled-tokenizer.ts';
import { renderToolCall, type ToolFormat } from '../src/model/tool-format.ts';
import type { Tokenizer } from '../src/model/tokenizer.ts';

export const title = 'Grammar mask per token (Qwen3 vocabulary, 151,669 tokens)';

const GAME_JS = Array.from({ length: 60 }, (_, i) => `  if (score > ${i}) { ctx.fillText("Level ${i} \\"ok\\"", ${i * 4}, 20); }`).join('\n');

function reply(format: ToolFormat): string {
  const calls = [
    { name: 'list_dir', arguments: {} },
    { name: 'read_file', arguments: { path: 'index.html', start_line: 1 } },
    { name: 'write_file', arguments: { path: 'game.js', content: `function draw(ctx, score) {\n${GAME_JS}\n}\n` } },
    { name: 'edit_file', arguments: { path: 'game.js', old: 'score > 3', new: 'score >= 3' } },
    { name: 'search', arguments: { pattern: 'fillText\\(', path: 'src' } },
    { name: 'serve', arguments: {} },
  ];
  return 'I will build the game now.\n' + calls.map((c) => renderToolCall(format, c)).join('\n');
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Times next()+accept() for every token inside a call, in µs. */
function timeCall(grammar: ToolCallGrammar, ids: number[]): number[] {
  const src = grammar.cursor();
  const times: number[] = [];
  for (const id of ids) {
    const inCall = src.inCall;
    const t0 = performance.now();
    const c = src.next();
    if (c?.bits && ((c.bits[id >>> 5] >>> (id & 31)) & 1) === 0) throw new Error(`token ${id} was masked out`);
    src.accept(id);
    const t1 = performance.now();
    if (inCall) times.push((t1 - t0) * 1000);
  }
  if (src.broken) throw new Error('grammar rejected the scripted reply');
  return times.sort((a, b) => a - b);
}

function figures(tok: Tokenizer, format: ToolFormat): Record<string, number> {
  const ids = tok.encode(reply(format));
  const t0 = performance.now();
  const grammar = new ToolCallGrammar({ tokenizer: tok, format, tools: BUILTIN_TOOL_SCHEMAS });
  const first = grammar.cursor([tok.special.toolCall!]).next();
  const startMs = performance.now() - t0;
  if (!first?.bits) throw new Error('no mask after <tool_call>');
  const cold = timeCall(grammar, ids);
  const warm = timeCall(grammar, ids);
  return {
    [`${format} grammar start to first mask (ms, trie built)`]: startMs,
    [`${format} mask per token cold median (µs)`]: quantile(cold, 0.5),
    [`${format} mask per token cold p95 (µs)`]: quantile(cold, 0.95),
    [`${format} mask per token cold max (µs)`]: cold[cold.length - 1],
    [`${format} mask per token warm median (µs)`]: quantile(warm, 0.5),
    [`${format} mask per token warm p95 (µs)`]: quantile(warm, 0.95),
    [`${format} tokens inside calls`]: cold.length,
    [`${format} masks computed`]: grammar.dfa.computedMasks,
  };
}

/** A fixed loop, to scale the other figures by how busy the machine was (≈10 ms on an idle laptop core). */
function calibrationMs(): number {
  const t0 = performance.now();
  let x = 0;
  for (let i = 0; i < 1e7; i++) x += i % 7;
  if (x < 0) console.log(x);
  return performance.now() - t0;
}

export async function run(): Promise<Record<string, number | string>> {
  const tok = await loadBundledQwen3Tokenizer();
  const calibration = calibrationMs();
  const t0 = performance.now();
  const bytes = tok.tokenByteTable();
  const bytesMs = performance.now() - t0;
  const index = buildVocabIndex(bytes, [...tok.addedTokens.values()]);
  vocabIndexFor(tok); // the grammars below use the per-tokenizer index
  return {
    'calibration loop 1e7 (ms; ≈10 idle)': calibration,
    'vocabulary size': String(tok.vocabSize),
    'token bytes, all ids (ms, once per model)': bytesMs,
    'vocabulary trie build (ms, once per model)': index.buildMs,
    'trie nodes': String(index.nodeCount),
    ...figures(tok, 'xml'),
    ...figures(tok, 'json'),
  };
}
