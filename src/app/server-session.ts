// The workspace on an OpenAI-compatible server (the start screen's "server" choice, ?server=URL): the
// server runs the model; this browser renders the prompt with the model's own chat template (tokenizer
// and template from `tokenizer`, a Hugging Face id, URL or /models/… path) and runs the agent and the
// preview. The choice is kept in this browser (localStorage) so the start screen offers it again.
// The server must allow this page's origin (CORS): llama.cpp's server does by default; vLLM needs
// --allowed-origins, Ollama OLLAMA_ORIGINS.
import { OpenAIBackend } from '../agent/openai-backend.ts';
import { probeServer } from '../agent/openai/server.ts';
import { BUILTIN_TOOL_SCHEMAS } from '../agent/tools/schemas.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { resolveModelSource } from '../model/sources/resolve.ts';
import { Tokenizer } from '../model/tokenizer.ts';
import { loadDeployment } from './deploy-config.ts';
import { modelUrlFor } from './models.ts';
import { cachedModelSource } from './model-cache.ts';
import { Workspace } from './workspace.ts';

export interface ServerChoice {
  url: string;                 // http://127.0.0.1:8080
  model: string;               // the model's name on the server
  tokenizer: string;           // where its tokenizer.json + tokenizer_config.json are
}

/** The URL starts empty: any address typed for the user would be a guess, and pooled itself may be on :8080. */
export const DEFAULT_SERVER_CHOICE: ServerChoice = { url: '', model: '', tokenizer: 'Qwen/Qwen3-1.7B' };

/**
 * Example server URLs for the form, each with the server it is the default of. llama.cpp's server is on
 * :8080 by default, pooled's too: when this page is served from :8080 that example would point back at
 * pooled, so llama.cpp is shown on another port (`llama-server --port 8081`).
 */
export function serverUrlExamples(pagePort: string): { url: string; server: string }[] {
  const llama = pagePort === '8080' ? { url: 'http://127.0.0.1:8081', server: 'llama.cpp with --port 8081' } : { url: 'http://127.0.0.1:8080', server: 'llama.cpp' };
  return [llama, { url: 'http://127.0.0.1:11434', server: 'Ollama' }, { url: 'http://127.0.0.1:8000', server: 'vLLM' }];
}
const KEY = 'pooled.server';

/** The last server choice made in this browser (the defaults when none or unreadable). */
export function savedServerChoice(storage: Pick<Storage, 'getItem'> = localStorage): ServerChoice {
  try {
    const v = JSON.parse(storage.getItem(KEY) ?? 'null') as Partial<ServerChoice> | null;
    if (v && typeof v.url === 'string' && typeof v.model === 'string' && typeof v.tokenizer === 'string') return { url: v.url, model: v.model, tokenizer: v.tokenizer };
  } catch {
    /* a broken entry: the defaults */
  }
  return { ...DEFAULT_SERVER_CHOICE };
}

export function saveServerChoice(choice: ServerChoice, storage: Pick<Storage, 'setItem'> = localStorage): void {
  storage.setItem(KEY, JSON.stringify(choice));
}

export async function openServerWorkspace(choice: ServerChoice, opts: { ctx?: number; askFirst?: boolean; origin?: string } = {}): Promise<Workspace> {
  const server = await probeServer(choice.url, choice.model);
  const tokenizerUrl = modelUrlFor(choice.tokenizer, opts.origin ?? location.origin);
  const source = cachedModelSource(await resolveModelSource(tokenizerUrl), tokenizerUrl);
  const tokenizer = await Tokenizer.fromSource(source);
  const template = ChatTemplate.fromTokenizerConfig(tokenizer.config as Record<string, unknown>, `${source.label}/tokenizer_config.json`);
  const { runJs } = await loadDeployment();
  const tools = BUILTIN_TOOL_SCHEMAS.filter((t) => runJs || t.name !== 'run_js');
  const backend = new OpenAIBackend({ server, model: choice.model, tokenizer, template, tools, ...(opts.ctx ? { contextSize: opts.ctx } : {}) });
  return Workspace.open({
    backend, tokenizer, format: template.format, projectId: `server:${server.base}`, runJs,
    ...(opts.askFirst === undefined ? {} : { askFirst: opts.askFirst }),
  });
}
