// An OpenAI chat completions body read into what the agent's path takes: ChatMessages for the model's chat
// template (assistant `tool_calls` with their JSON-string arguments as objects, `tool` messages named by
// the call they answer), the tools as ToolSchemas, tool_choice, sampling, stop strings and the answer cap.
// Everything is checked here, field by field, with a 400 that names the field.
import type { ChatMessage, ToolSchema } from '../model/chat-types.ts';
import type { SamplingOptions } from '../model/sampling-types.ts';
import { badRequest } from './api-error.ts';
import { API_LIMITS } from './limits.ts';
import { readMaxTokens, readSampling, readStop, readStream, requireOneChoice, type Body } from './sampling.ts';

/** auto: text or calls; none: no call; required: at least one call; function: a call of that tool. */
export type ToolChoice = { kind: 'auto' } | { kind: 'none' } | { kind: 'required' } | { kind: 'function'; name: string };

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  tools: ToolSchema[];
  toolChoice: ToolChoice;
  sampling: SamplingOptions;
  maxTokens?: number;
  stop: string[];
  stream: boolean;
  includeUsage: boolean;
}

const isObject = (v: unknown): v is Body => v !== null && typeof v === 'object' && !Array.isArray(v);
const TOOL_NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${API_LIMITS.toolNameChars}}$`);

export function readChatBody(body: unknown): ChatBody {
  if (!isObject(body)) throw badRequest('body', 'must be a JSON object');
  if (typeof body.model !== 'string' || body.model === '') throw badRequest('model', 'must name the model (GET /v1/models lists it)');
  requireOneChoice(body);
  const tools = readTools(body.tools);
  const toolChoice = readToolChoice(body.tool_choice, tools);
  const maxTokens = readMaxTokens(body);
  return {
    model: body.model,
    messages: readMessages(body.messages),
    tools,
    toolChoice,
    sampling: readSampling(body),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    stop: readStop(body),
    ...readStream(body),
  };
}

/** Message content: a string, null (an assistant turn that only called), or text parts. */
function readContent(v: unknown, where: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    return v.map((part, i) => {
      if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') throw badRequest(`${where}[${i}]`, 'only text parts ({type: "text", text}) are served');
      return part.text;
    }).join('');
  }
  throw badRequest(where, 'must be a string, null or a list of text parts');
}

function readMessages(v: unknown): ChatMessage[] {
  if (!Array.isArray(v) || v.length === 0) throw badRequest('messages', 'must be a non-empty list');
  if (v.length > API_LIMITS.messages) throw badRequest('messages', `at most ${API_LIMITS.messages} messages`);
  const callNames = new Map<string, string>();   // tool_call_id → the function it called
  return v.map((m, i): ChatMessage => {
    const where = `messages[${i}]`;
    if (!isObject(m)) throw badRequest(where, 'must be an object');
    const content = readContent(m.content, `${where}.content`);
    switch (m.role) {
      case 'system': case 'developer': return { role: 'system', content };
      case 'user': return { role: 'user', content };
      case 'assistant': {
        if (m.tool_calls === undefined || m.tool_calls === null) return { role: 'assistant', content };
        if (!Array.isArray(m.tool_calls)) throw badRequest(`${where}.tool_calls`, 'must be a list');
        const calls = m.tool_calls.map((c, j) => readCall(c, `${where}.tool_calls[${j}]`, callNames));
        return calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content };
      }
      case 'tool': {
        const name = typeof m.tool_call_id === 'string' ? callNames.get(m.tool_call_id) : undefined;
        return name === undefined ? { role: 'tool', content } : { role: 'tool', content, name };
      }
      default: throw badRequest(`${where}.role`, 'must be system, developer, user, assistant or tool');
    }
  });
}

/** {id, type: "function", function: {name, arguments: JSON text of an object}} → {name, arguments}. */
function readCall(c: unknown, where: string, callNames: Map<string, string>): { name: string; arguments: Record<string, unknown> } {
  if (!isObject(c) || !isObject(c.function) || typeof c.function.name !== 'string') throw badRequest(where, 'must be {type: "function", function: {name, arguments}}');
  const raw = c.function.arguments;
  let args: unknown = raw ?? {};
  if (typeof raw === 'string') {
    try { args = raw.trim() === '' ? {} : JSON.parse(raw); } catch { throw badRequest(`${where}.function.arguments`, 'is not JSON'); }
  }
  if (!isObject(args)) throw badRequest(`${where}.function.arguments`, 'must be a JSON object');
  if (typeof c.id === 'string') callNames.set(c.id, c.function.name);
  return { name: c.function.name, arguments: args };
}

/**
 * [{type: "function", function: {name, description?, parameters?}}] → ToolSchemas. The parameters are kept
 * as the client wrote them (the template renders them as given); only their frame is checked.
 */
function readTools(v: unknown): ToolSchema[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > API_LIMITS.tools) throw badRequest('tools', `must be a list of at most ${API_LIMITS.tools} tools`);
  const names = new Set<string>();
  return v.map((t, i) => {
    const where = `tools[${i}]`;
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) throw badRequest(where, 'must be {type: "function", function: {name, description, parameters}}');
    const f = t.function;
    if (typeof f.name !== 'string' || !TOOL_NAME.test(f.name)) throw badRequest(`${where}.function.name`, `must be 1 to ${API_LIMITS.toolNameChars} of A-Z a-z 0-9 _ . -`);
    if (names.has(f.name)) throw badRequest(`${where}.function.name`, `${f.name} is declared twice`);
    names.add(f.name);
    if (f.description !== undefined && typeof f.description !== 'string') throw badRequest(`${where}.function.description`, 'must be a string');
    const p = f.parameters ?? { type: 'object', properties: {} };
    if (!isObject(p) || (p.type !== undefined && p.type !== 'object')) throw badRequest(`${where}.function.parameters`, 'must be a JSON schema of type "object"');
    const properties = p.properties ?? {};
    if (!isObject(properties) || !Object.values(properties).every(isObject)) throw badRequest(`${where}.function.parameters.properties`, 'must map names to schemas');
    const required = p.required ?? [];
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && r in properties)) {
      throw badRequest(`${where}.function.parameters.required`, 'must list properties it declares');
    }
    const parameters = { ...p, type: 'object', properties, required } as ToolSchema['parameters'];
    return { name: f.name, description: (f.description as string | undefined) ?? '', parameters };
  });
}

function readToolChoice(v: unknown, tools: ToolSchema[]): ToolChoice {
  if (v === undefined || v === null || v === 'auto') return { kind: 'auto' };
  if (v === 'none') return { kind: 'none' };
  if (v === 'required') {
    if (tools.length === 0) throw badRequest('tool_choice', '"required" needs tools');
    return { kind: 'required' };
  }
  if (isObject(v) && v.type === 'function' && isObject(v.function) && typeof v.function.name === 'string') {
    const name = v.function.name;
    if (!tools.some((t) => t.name === name)) throw badRequest('tool_choice.function.name', `${name} is not among the tools`);
    return { kind: 'function', name };
  }
  throw badRequest('tool_choice', 'must be "auto", "none", "required" or {type: "function", function: {name}}');
}
