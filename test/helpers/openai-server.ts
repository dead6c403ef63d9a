// A real HTTP server in the test process that speaks the OpenAI wire format from a script: GET /v1/models,
// POST /v1/completions and /v1/chat/completions streamed as server-sent events (or a scripted error), and
// the routes by which llama.cpp (/props) or vLLM (/version) say what they are. A chat-only server answers
// /v1/completions as such servers do (404, 405, or OpenAI's "This is a chat model" 404); a chat server may
// refuse `tools` as llama.cpp without --jinja does. It records every request body and path, and whether
// the client closed a stream before its end (Stop). 127.0.0.1 only; CORS open for browser tests.
// usage.prompt_tokens is counted as a server with the model's own vocabulary counts: a prompt of ids is its
// length, a text prompt is counted with the bundled Qwen3 tokenizer (a reply's `promptTokens` overrides it:
// a server with another tokenizer); a chat request reports none (the server's own template is not ours).
// A reply may be `raw`: the test writes the response itself (a hostile or broken server).
import http from 'node:http';
import { loadBundledQwen3Tokenizer } from '../../src/model/bundled-tokenizer.ts';

export interface ScriptedReply {
  /** The answer's text, streamed in `chunks` (default: pieces of 4 characters, like tokens). */
  text?: string;
  chunks?: string[];
  /** Wait this long before each chunk (default 0). */
  delayMs?: number;
  finish?: 'stop' | 'length';
  /** Answer with this HTTP status and body instead ({"error": {"message": …}} when `message` is given). */
  status?: number;
  message?: string;
  /** After the chunks, an error event in the stream. */
  streamError?: string;
  /** 400 "failed to parse grammar" when the request carries a grammar. */
  refuseGrammar?: boolean;
  /** 400 "prompt must be a string" when the prompt is token ids (a server that takes text only). */
  refuseIds?: boolean;
  /** Send nothing at all after the headers (a stalled server). */
  stall?: boolean;
  /** Chat only: calls streamed as delta.tool_calls, their arguments in `pieces` parts (default 3). */
  toolCalls?: { name: string; arguments: string; pieces?: number }[];
  /** Answer with one JSON document instead of a stream (a server that ignores stream: true). */
  whole?: boolean;
  /** usage.prompt_tokens to report instead of the count, or made from it (a server whose tokenizer differs from ours). */
  promptTokens?: number | ((counted: number) => number);
  /** Write the whole response yourself (after the request body was read and recorded). */
  raw?: (res: http.ServerResponse) => void | Promise<void>;
}

export interface ServerRoutes {
  /** How POST /v1/completions is answered: served (default), or refused as a chat-only server does. */
  completions?: 'yes' | '404' | '405' | 'chat-model';
  /** Whether /v1/chat/completions exists (default yes) and takes `tools` (default yes). */
  chat?: boolean;
  tools?: boolean;
}

export interface ScriptedServer {
  url: string;
  port: number;
  requests: Record<string, unknown>[];
  /** The path of each POST, in order (refused ones included). */
  paths: string[];
  /** Streams the client closed before their end. */
  closedEarly: number;
  /** Chunks written for each request, in order. */
  chunksSent: number[];
  close(): Promise<void>;
}

export async function startOpenAIServer(opts: { replies: ScriptedReply[]; model?: string; kind?: 'llama.cpp' | 'vllm' | 'generic'; nCtx?: number; routes?: ServerRoutes }): Promise<ScriptedServer> {
  const model = opts.model ?? 'qwen3-test';
  const replies = [...opts.replies];
  const routes = { completions: 'yes', chat: true, tools: true, ...opts.routes };
  const state = { requests: [] as Record<string, unknown>[], paths: [] as string[], closedEarly: 0, chunksSent: [] as number[] };
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', 'content-type, accept, authorization');
    if (req.method === 'OPTIONS') { res.writeHead(204); res.end(); return; }
    const url = req.url ?? '';
    if (req.method === 'GET' && url === '/v1/models') {
      json(res, 200, { object: 'list', data: [{ id: model, object: 'model', ...(opts.kind === 'vllm' && opts.nCtx ? { max_model_len: opts.nCtx } : {}) }] });
      return;
    }
    if (req.method === 'GET' && url === '/props' && opts.kind === 'llama.cpp') {
      json(res, 200, { default_generation_settings: { n_ctx: opts.nCtx ?? 8192 }, total_slots: 1 });
      return;
    }
    if (req.method === 'GET' && url === '/version' && opts.kind === 'vllm') { json(res, 200, { version: '0.10.1' }); return; }
    if (req.method === 'POST' && (url === '/v1/completions' || url === '/v1/chat/completions')) {
      state.paths.push(url);
      const chat = url === '/v1/chat/completions';
      if (!chat && routes.completions === '405') { json(res, 405, { detail: 'Method Not Allowed' }); return; }
      if (!chat && routes.completions === 'chat-model') {
        json(res, 404, { error: { message: 'This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?', type: 'invalid_request_error' } });
        return;
      }
      if ((!chat && routes.completions === '404') || (chat && !routes.chat)) { json(res, 404, { detail: 'Not Found' }); return; }
      let raw = '';
      req.on('data', (d: Buffer) => { raw += d.toString('utf8'); });
      req.on('end', () => {
        const body = JSON.parse(raw) as Record<string, unknown>;
        if (chat && body.tools !== undefined && !routes.tools) {
          state.requests.push(body);
          json(res, 500, { error: { code: 500, message: 'tools param requires --jinja flag', type: 'server_error' } });
          return;
        }
        void answer(body, res, chat);
      });
      return;
    }
    json(res, 404, { error: { message: `no route ${req.method} ${url}` } });
  });

  async function answer(body: Record<string, unknown>, res: http.ServerResponse, chat: boolean): Promise<void> {
    state.requests.push(body);
    const index = state.chunksSent.push(0) - 1;
    if (body.model !== model) { json(res, 404, { error: { code: 404, message: `model '${String(body.model)}' not found` } }); return; }
    const reply = replies.shift() ?? { status: 500, message: 'the scripted server has no more replies' };
    if (reply.refuseGrammar && (body.grammar !== undefined || body.structured_outputs !== undefined)) {
      json(res, 400, { error: { code: 400, message: 'failed to parse grammar', type: 'invalid_request_error' } });
      replies.unshift({ ...reply, refuseGrammar: false });
      return;
    }
    if (reply.refuseIds && Array.isArray(body.prompt)) {
      json(res, 400, { error: { code: 400, message: "'prompt' must be a string", type: 'invalid_request_error' } });
      replies.unshift({ ...reply, refuseIds: false });
      return;
    }
    if (reply.status) { json(res, reply.status, reply.message ? { error: { code: reply.status, message: reply.message } } : {}); return; }
    if (reply.raw) {
      res.on('close', () => { if (!res.writableEnded) state.closedEarly++; });
      await reply.raw(res);
      return;
    }
    const text = reply.text ?? '';
    const chunks = reply.chunks ?? (text.match(/[\s\S]{1,4}/g) ?? []);
    const counted = chat ? undefined : Array.isArray(body.prompt) ? body.prompt.length : (await loadBundledQwen3Tokenizer()).encode(String(body.prompt)).length;
    const promptTokens = typeof reply.promptTokens === 'function' ? reply.promptTokens(counted ?? 0) : reply.promptTokens ?? counted;
    const usage = { prompt_tokens: promptTokens, completion_tokens: chunks.length, total_tokens: 0 };
    const finish = reply.finish ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    if (reply.whole) {
      const choice = chat
        ? { index: 0, message: { role: 'assistant', content: text, ...(reply.toolCalls ? { tool_calls: reply.toolCalls.map((c, i) => ({ id: `c${i}`, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}) }, finish_reason: finish }
        : { index: 0, text, finish_reason: finish };
      json(res, 200, { id: 'cmpl-1', object: chat ? 'chat.completion' : 'text_completion', model, choices: [choice], usage });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (reply.stall) return;
    let open = true;
    res.on('close', () => { if (open) state.closedEarly++; open = false; });
    const send = (event: unknown) => res.write(`data: ${JSON.stringify(event)}\n\n`);
    const object = chat ? 'chat.completion.chunk' : 'text_completion';
    const piece = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      send({ id: 'cmpl-1', object, model, choices: [chat ? { index: 0, delta, finish_reason: finishReason } : { index: 0, text: delta.content ?? '', finish_reason: finishReason }] });
    for (const chunk of chunks) {
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (!open) return;
      piece({ content: chunk });
      state.chunksSent[index]!++;
    }
    for (const [i, c] of (reply.toolCalls ?? []).entries()) {
      // As llama.cpp and vLLM stream a call: id and name first, then the arguments in pieces.
      piece({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: '' } }] });
      const n = c.pieces ?? 3;
      const size = Math.ceil(c.arguments.length / n) || 1;
      for (let at = 0; at < c.arguments.length; at += size) {
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        if (!open) return;
        piece({ tool_calls: [{ index: i, function: { arguments: c.arguments.slice(at, at + size) } }] });
        state.chunksSent[index]!++;
      }
    }
    if (reply.streamError) { send({ error: { message: reply.streamError, type: 'server_error' } }); open = false; res.end(); return; }
    piece(chat ? {} : { content: '' }, finish);
    send({ id: 'cmpl-1', object, model, choices: [], usage });
    res.write('data: [DONE]\n\n');
    open = false;
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`, port, ...state,
    get requests() { return state.requests; },
    get paths() { return state.paths; },
    get closedEarly() { return state.closedEarly; },
    get chunksSent() { return state.chunksSent; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
