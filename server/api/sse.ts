// Server-sent events as OpenAI streams them: `data: JSON\n\n` per chunk, `data: [DONE]\n\n` at the end.
// JSON.stringify never writes a raw newline, so a chunk cannot forge a second event.
import type { Response } from 'express';

export function startEventStream(res: Response): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no', // a reverse proxy (nginx) must not hold chunks back
  });
  res.flushHeaders();
}

export function writeEvent(res: Response, data: object): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

export function endEventStream(res: Response): void {
  res.end('data: [DONE]\n\n');
}
