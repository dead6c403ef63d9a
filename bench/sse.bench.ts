// The OpenAI backend's SSE parser (issue 27, item 7): one 1 MiB event in 256-byte pieces, as a hostile or
// merely slow server sends it, against the same event in one piece. A linear parser costs about the same
// both ways (ratio near 1); the quadratic one it replaced took 8.5 s here in pieces (26 s on a loaded
// machine) — a ratio in the hundreds.
import { SseParser } from '../src/agent/openai/sse.ts';

export const title = 'Agent: SSE parser, one 1 MiB event in 256-byte pieces vs one piece';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function time(bytes: Uint8Array, piece: number): number {
  const p = new SseParser(2 << 20);
  const t0 = performance.now();
  let events = 0;
  for (let at = 0; at < bytes.length; at += piece) events += p.push(bytes.subarray(at, at + piece)).length;
  const ms = performance.now() - t0;
  if (events !== 1) throw new Error(`expected one event, got ${events}`);
  return ms;
}

export async function run(): Promise<Record<string, number | string>> {
  const payload = JSON.stringify({ choices: [{ text: 'x'.repeat((1 << 20) - 100) }] });
  const bytes = new TextEncoder().encode(`data: ${payload}\n\n`);
  const pieces: number[] = [];
  const whole: number[] = [];
  for (let k = 0; k < 5; k++) { pieces.push(time(bytes, 256)); whole.push(time(bytes, bytes.length)); }
  return {
    'event bytes': bytes.length,
    '256-byte pieces ms (median of 5)': median(pieces),
    'one piece ms (median of 5)': median(whole),
    'pieces / one piece': median(pieces) / median(whole),
  };
}
