// The workspace on a scripted model (?agent=replay&script=<url>): for trying the agent without a real
// model, and for the browser tests. The tokenizer and chat template come from a model's files (the
// built-in tiny model by default), the replies from a JSONL script: one {"text": "..."} per line.
import { replayBackend } from '../agent/replay/replay-engine.ts';
import { parseReplayJsonl, ReplayScriptError } from '../agent/replay/script.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { resolveModelSource } from '../model/sources/resolve.ts';
import { Tokenizer } from '../model/tokenizer.ts';
import { modelUrlFor, TINY_MODEL_ID } from './models.ts';
import { DEFAULT_CTX, DEMO_SCRIPT, type AppParams } from './url-params.ts';
import { cachedModelSource } from './model-cache.ts';
import { Workspace } from './workspace.ts';
import { loadDeployment } from './deploy-config.ts';
import { QueuedBackend } from '../api/generate-queue.ts';
import { apiModel } from '../api/api-model.ts';
import { ApiServe } from './api-serve.ts';

/** The model id the replay demo's endpoint lists. */
export const REPLAY_MODEL_ID = 'pooled-replay';

/** The replay workspace and its endpoint switch ("Serve this room's model" works on the scripted model too). */
export interface ReplaySession { workspace: Workspace; api: ApiServe }

export async function openReplayWorkspace(params: AppParams, origin = location.origin): Promise<ReplaySession> {
  const script = params.script ?? DEMO_SCRIPT;
  const scriptUrl = new URL(script, origin).href;
  const response = await fetch(scriptUrl);
  if (!response.ok) throw new ReplayScriptError(`${script}: the replay script could not be fetched (HTTP ${response.status})`);
  const replies = parseReplayJsonl(await response.text(), script);
  const modelUrl = modelUrlFor(params.model ?? TINY_MODEL_ID, origin);
  const source = cachedModelSource(await resolveModelSource(modelUrl), modelUrl);
  const tokenizer = await Tokenizer.fromSource(source);
  const template = ChatTemplate.fromTokenizerConfig(tokenizer.config as Record<string, unknown>, `${source.label}/tokenizer_config.json`);
  const { backend, engine } = replayBackend({ tokenizer, template, replies, contextSize: params.ctx ?? DEFAULT_CTX, name: `replay of ${script}`, scripted: true, tokenDelayMs: params.delay });
  const { runJs } = await loadDeployment();
  // The agent's answers and the endpoint's requests take turns on one queue, as in a room.
  const queued = new QueuedBackend(backend);
  const api = new ApiServe({ model: apiModel(REPLAY_MODEL_ID, queued, tokenizer, template.format), origin });
  const workspace = await Workspace.open({
    backend: queued, tokenizer, format: template.format, projectId: 'replay', runJs,
    // The demo says "whatever you ask, it replays the same script": each request from its first reply. A
    // script of one's own (?script=, tests) runs on across requests, one reply after the other.
    ...(script === DEMO_SCRIPT ? { beforeRequest: () => engine.restart() } : {}),
    ...(params.ask === undefined ? {} : { askFirst: params.ask }),
    ...(params.grammar === false ? { constrained: false } : {}),
  });
  return { workspace, api };
}
