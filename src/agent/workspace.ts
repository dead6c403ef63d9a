// One project's agent, wired for a host without the browser app (tests, a future headless host): file
// tools over the project's files plus extra tools (e.g. the preview's serve / preview_logs / run_js), the
// model's call codec, and a session restored on open and saved as the request goes (after every result,
// note and summary). The browser app wires its own in src/app/workspace.ts (IndexedDB files, the
// preview, approvals with diffs).
import type { Backend } from './backend.ts';
import type { ProjectFiles } from './files/types.ts';
import type { Tool } from './tool-types.ts';
import type { Tokenizer } from '../model/tokenizer.ts';
import type { ToolFormat } from '../model/tool-format.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { createCallCodec } from './call-codec.ts';
import { createFileTools } from './tools/file-tools.ts';
import type { RegexRunner } from './tools/regex-runner.ts';
import { ToolRegistry } from './tools/registry.ts';
import { Agent, type AgentOptions } from './loop.ts';
import { openSession, setAsideBecause, snapshotSession, type SessionStore } from './session-store.ts';

export interface WorkspaceOptions {
  projectId: string;
  backend: Backend;
  tokenizer: Tokenizer;
  files: ProjectFiles;
  /** The call format; default: detected from the tokenizer_config's chat template. */
  format?: ToolFormat;
  extraTools?: Tool[];
  sessions?: SessionStore;
  askFirst?: boolean;
  approve?: AgentOptions['approve'];
  regexRunner?: RegexRunner;
}

export interface AgentWorkspace {
  agent: Agent;
  /** The saved session was made with another model, so its turns were encoded again. */
  reencoded: boolean;
  /** The saved session could not be used: set aside (kept under another name) and a new one started. Says so. */
  sessionProblem?: string;
  /** Saves now (also done after every call result, note and summary). Resolves when written. */
  save(): Promise<void>;
  /** New task: forgets the conversation (keeps the files and the timeline) and saves. */
  newTask(): Promise<void>;
}

export async function openAgentWorkspace(o: WorkspaceOptions): Promise<AgentWorkspace> {
  const format = o.format ?? ChatTemplate.fromTokenizerConfig(o.tokenizer.config).format;
  const tools = new ToolRegistry(createFileTools(o.files, o.regexRunner ? { regexRunner: o.regexRunner } : {}));
  for (const tool of o.extraTools ?? []) tools.register(tool);
  const opened = o.sessions ? await openSession(o.sessions, o.projectId, o.backend) : {};
  let { restored, problem } = opened;
  const options: AgentOptions = {
    backend: o.backend, tools, format, files: o.files,
    codec: createCallCodec({ tokenizer: o.tokenizer, format, tools: tools.schemas() }),
    askFirst: o.askFirst ?? false,
  };
  if (o.approve) options.approve = o.approve;
  let agent: Agent;
  try {
    agent = new Agent(restored ? { ...options, restore: restored } : options);
  } catch (e) {
    if (!restored || !o.sessions) throw e;
    problem = await setAsideBecause(o.sessions, o.projectId, e as Error); // a session that passed the checks and still broke the agent
    restored = undefined;
    agent = new Agent(options);
  }

  let chain: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    if (!o.sessions) return Promise.resolve();
    const data = snapshotSession(agent, o.backend.name);
    chain = chain.then(() => o.sessions!.save(o.projectId, data));
    return chain;
  };
  agent.subscribe((e) => {
    if (e.type === 'result' || e.type === 'note' || e.type === 'summary' || e.type === 'request') void save();
  });
  return {
    agent,
    reencoded: restored?.reencoded ?? false,
    ...(problem ? { sessionProblem: problem } : {}),
    save,
    newTask: () => {
      agent.newTask();
      return save();
    },
  };
}
