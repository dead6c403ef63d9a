// The API's model in Node: the real Qwen3 tokenizer, the JSON-call (qwen3) or XML-call (qwen3-coder) chat
// template, and the replay model under the real Generator and EngineBackend (scripted replies sampled
// through the real call grammar), behind the shared queue, with every request recorded.
import { readFileSync } from 'node:fs';
import { replayBackend } from '../../../src/agent/replay/replay-engine.ts';
import { RecordingBackend } from '../../../src/agent/recording-backend.ts';
import { loadBundledQwen3Tokenizer } from '../../../src/model/bundled-tokenizer.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import type { ToolFormat } from '../../../src/model/tool-format.ts';
import type { Tokenizer } from '../../../src/model/tokenizer.ts';
import { apiModel } from '../../../src/api/api-model.ts';
import { GenerateQueue, QueuedBackend } from '../../../src/api/generate-queue.ts';

export const MODEL = 'qwen3-test';
const TEMPLATES: Record<ToolFormat, string> = { json: 'qwen3', xml: 'qwen3-coder' };

let tokenizer: Promise<Tokenizer> | undefined;
/** The real 151,669-token vocabulary, loaded once per file (~2 s; callers give their beforeAll 120 s on a busy CI box). */
export function qwenTokenizer(): Promise<Tokenizer> {
  return (tokenizer ??= loadBundledQwen3Tokenizer());
}

export function templateFor(format: ToolFormat): ChatTemplate {
  return new ChatTemplate(readFileSync(new URL(`../../fixtures/chat-templates/${TEMPLATES[format]}.jinja`, import.meta.url), 'utf8'));
}

export async function replayApi(format: ToolFormat, replies: string[], o: { tokenDelayMs?: number; contextSize?: number } = {}) {
  const tok = await qwenTokenizer();
  const template = templateFor(format);
  const replay = replayBackend({ tokenizer: tok, template, replies, contextSize: o.contextSize ?? 4096, tokenDelayMs: o.tokenDelayMs ?? 0 });
  const recorded = new RecordingBackend(replay.backend);
  const queue = new GenerateQueue();
  const backend = new QueuedBackend(recorded, queue);
  return { model: apiModel(MODEL, backend, tok, format), recorded, replay: replay.engine, queue, backend, tok, template };
}

export const WEATHER_TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'The weather in a city now', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' }, days: { type: 'integer', description: 'Days ahead' } }, required: ['city'] } } },
  { type: 'function', function: { name: 'get_time', description: 'The time in a city', parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] } } },
];
