// GGUF in the browser (headless Chromium, the production build): a tiny Qwen3 MoE Q4_K_M GGUF is found
// by its URL or as repo:QUANT through a fake hub listing, its header read by Range with
// @huggingface/gguf as bundled, tokenizer and chat template built from the metadata, and 16 greedy
// tokens on the CPU reference equal the same model's in Node.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Generator } from '../src/model/generator.ts';
import { loadWeights } from '../src/model/load-weights.ts';
import { ReferenceEngine } from '../src/model/reference/reference-engine.ts';
import { resolveModelSource } from '../src/model/sources/resolve.ts';
import { Tokenizer } from '../src/model/tokenizer.ts';
import { writeTinyGgufInto } from '../src/model/tiny/write-node.ts';
import { newDeviceContext, useServerAndBrowser } from './helpers/browser.ts';

const root = mkdtempSync(path.join(tmpdir(), 'pooled-e2e-gguf-'));
const repo = path.join(root, 'Tiny', 'Moe-GGUF', 'resolve', 'main');
const PROMPT = 'def fibonacci(n):';
let file = '';
let expected: number[] = [];
let promptIds: number[] = [];

beforeAll(async () => {
  mkdirSync(repo, { recursive: true });
  const coder = readFileSync(path.resolve(import.meta.dirname, '../test/fixtures/chat-templates/qwen3-coder.jinja'), 'utf8');
  [file] = await writeTinyGgufInto(repo, { layers: 3, seed: 4, headDim: 64, intermediate: 256, fileType: 'Q4_K_M', moe: { experts: 8, topK: 2 } }, 'tiny-bpe', coder);
  mkdirSync(path.join(root, 'api', 'models', 'Tiny', 'Moe-GGUF', 'tree'), { recursive: true });
  writeFileSync(path.join(root, 'api', 'models', 'Tiny', 'Moe-GGUF', 'tree', 'main'), JSON.stringify([{ type: 'file', path: file!, size: 1 }]));
  const src = await resolveModelSource(path.join(repo, file!));
  promptIds = (await Tokenizer.fromSource(src)).encode(PROMPT);
  const weights = await loadWeights(src, { layers: [0, 3], embedding: true, head: true });
  const ctx = promptIds.length + 16;
  expected = (await new Generator(new ReferenceEngine(weights, { ctx }), { ctx }).generate(promptIds, { maxNewTokens: 16 })).ids;
}, 180_000);

const env = useServerAndBrowser({ port: 0, extraStatic: { '/hub': root } });

async function run(query: string): Promise<Record<string, unknown>> {
  const context = await newDeviceContext(env.browser);
  const page = await context.newPage();
  await page.goto(`${env.server.url}/harness/gguf.html?${query}`);
  await page.waitForFunction('window.__gguf && window.__gguf.state !== "loading"', undefined, { timeout: 240_000, polling: 250 });
  const result = (await page.evaluate('window.__gguf')) as Record<string, unknown>;
  await context.close();
  return result;
}

describe('a GGUF model in the browser', () => {
  it('from its .gguf URL: the same 16 greedy tokens as in Node, XML calls from its template', async () => {
    const r = await run(`model=${encodeURIComponent(`/hub/Tiny/Moe-GGUF/resolve/main/${file}`)}&tokens=16&prompt=${encodeURIComponent(PROMPT)}`);
    expect(r.state, String(r.message)).toBe('done');
    expect(r).toMatchObject({ modelFile: file, prompt: promptIds, ids: expected, format: 'xml', modelType: 'qwen3_moe' });
    expect(r.vocab as number).toBeLessThan(1000);
  }, 300_000);

  it('as repo:QUANT through the hub listing', async () => {
    const r = await run(`model=Tiny/Moe-GGUF:Q4_K_M&hf=/hub&tokens=16&prompt=${encodeURIComponent(PROMPT)}`);
    expect(r.state, String(r.message)).toBe('done');
    expect(r.ids).toEqual(expected);
  }, 300_000);
});
