// A real HTTP server in the test process that speaks the OpenAI wire format from a script: GET /v1/models,
// POST /v1/completions streamed as server-sent events (or a scripted error), and the routes by which
// llama.cpp (/props) or vLLM (/version) say what they are. It records every request body, and whether
// the client closed a stream before its end (Stop). 127.0.0.1 only; CORS open for browser tests.
import http from 'node:http';

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
  /** Send nothing at all after the headers (a stalled server). */
  stall?: boolean;
}

export interface ScriptedServer {
  url: string;
  port: number;
  requests: Record<string, unknown>[];
  /** Streams the client closed before their end. */
  closedEarly: number;
  /** Chunks written for each request, in order. */
  chunksSent: number[];
  close(): Promise<void>;
}

export async function startOpenAIServer(opts: { replies: ScriptedReply[]; model?: string; kind?: 'llama.cpp' | 'vllm' | 'generic'; nCtx?: number }): Promise<ScriptedServer> {
  const model = opts.model ?? 'qwen3-test';
  const replies = [...opts.replies];
  const state = { requests: [] as Record<string, unknown>[], closedEarly: 0, chunksSent: [] as number[] };
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
    if (req.method === 'POST' && url === '/v1/completions') {
      let raw = '';
      req.on('data', (d: Buffer) => { raw += d.toString('utf8'); });
      req.on('end', () => void answer(JSON.parse(raw) as Record<string, unknown>, res));
      return;
    }
    json(res, 404, { error: { message: `no route ${req.method} ${url}` } });
  });

  async function answer(body: Record<string, unknown>, res: http.ServerResponse): Promise<void> {
    state.requests.push(body);
    const index = state.chunksSent.push(0) - 1;
    if (body.model !== model) { json(res, 404, { error: { code: 404, message: `model '${String(body.model)}' not found` } }); return; }
    const reply = replies.shift() ?? { status: 500, message: 'the scripted server has no more replies' };
    if (reply.refuseGrammar && (body.grammar !== undefined || body.structured_outputs !== undefined)) {
      json(res, 400, { error: { code: 400, message: 'failed to parse grammar', type: 'invalid_request_error' } });
      replies.unshift({ ...reply, refuseGrammar: false });
      return;
    }
    if (reply.status) { json(res, reply.status, reply.message ? { error: { code: reply.status, message: reply.message } } : {}); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (reply.stall) return;
    let open = true;
    res.on('close', () => { if (open) state.closedEarly++; open = false; });
    const text = reply.text ?? '';
    const chunks = reply.chunks ?? (text.match(/[\s\S]{1,4}/g) ?? []);
    const send = (event: unknown) => res.write(`data: ${JSON.stringify(event)}\n\n`);
    for (const chunk of chunks) {
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (!open) return;
      send({ id: 'cmpl-1', object: 'text_completion', model, choices: [{ index: 0, text: chunk, finish_reason: null }] });
      state.chunksSent[index]!++;
    }
    if (reply.streamError) { send({ error: { message: reply.streamError, type: 'server_error' } }); open = false; res.end(); return; }
    send({ id: 'cmpl-1', object: 'text_completion', model, choices: [{ index: 0, text: '', finish_reason: reply.finish ?? 'stop' }] });
    send({ id: 'cmpl-1', object: 'text_completion', model, choices: [], usage: { prompt_tokens: String(body.prompt).length, completion_tokens: chunks.length, total_tokens: 0 } });
    res.write('data: [DONE]\n\n');
    open = false;
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`, port, ...state,
    get requests() { return state.requests; },
    get closedEarly() { return state.closedEarly; },
    get chunksSent() { return state.chunksSent; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
