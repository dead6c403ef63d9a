// The one-line summary that closes a request:
//   6 steps · 11 tool calls · 2143 tok · 41.2 tok/s · 2 devices · 58.3 s
// with the reason appended when it is not done (" · stuck").
import { MAX_STEPS } from './limits.ts';

/** How a request ended: the one list the summary, the timeline and the session reader share. */
export const END_REASONS = ['done', 'stopped', 'limit', 'stuck', 'context', 'error'] as const;
export type EndReason = (typeof END_REASONS)[number];

export interface RequestStats {
  steps: number;
  toolCalls: number;
  generated: number;           // tokens the model sampled in this request
  generateSeconds: number;     // time spent generating them (for tok/s)
  devices: number;
  /** A scripted model (no speed, no devices to speak of) or a model server (its devices are not ours). */
  runsOn?: 'scripted' | 'server';
  seconds: number;             // wall time of the request
  /** An HTTP server's own count of the tokens it generated (shown beside ours), when it gives one. */
  serverTokens?: number;
  /** Speculative decoding, summed over the request's answers when it was on: drafted tokens checked, accepted, passes. */
  drafted?: number;
  accepted?: number;
  passes?: number;
  /** The drafters those answers used ("lookup", "draft:Qwen3-0.6B"; several joined by ", " when switched mid-request). */
  drafter?: string;
}

const count = (n: number, one: string) => `${n} ${n === 1 ? one : one + 's'}`;

export function summaryLine(stats: RequestStats, reason: EndReason): string {
  const rate = stats.generateSeconds > 0 ? stats.generated / stats.generateSeconds : 0;
  const parts = [
    count(stats.steps, 'step'),
    count(stats.toolCalls, 'tool call'),
    stats.serverTokens === undefined ? `${stats.generated} tok` : `${stats.generated} tok (server: ${stats.serverTokens})`,
    ...(stats.runsOn === 'scripted' ? ['scripted model'] : [`${rate.toFixed(1)} tok/s`]),
    ...(stats.runsOn === 'server' ? ['on the server'] : stats.runsOn === 'scripted' ? [] : [count(stats.devices, 'device')]),
    `${stats.seconds.toFixed(1)} s`,
  ];
  if (reason !== 'done') parts.push(reason);
  return parts.join(' · ');
}

/**
 * The summary's tooltip when speculation was on: "speculation (prompt lookup): 312 of 640 drafted tokens
 * accepted (49%), 1.5 tokens per pass", the drafter named when known. Null when it was off.
 */
export function speculationTip(stats: RequestStats): string | null {
  if (stats.passes === undefined || stats.drafted === undefined || stats.accepted === undefined) return null;
  const by = stats.drafter ? ` (${stats.drafter.split(', ').map(drafterInWords).join(', ')})` : '';
  if (stats.passes === 0) return `speculation on${by}: nothing decoded yet`;
  const share = stats.drafted > 0 ? ` (${Math.round((100 * stats.accepted) / stats.drafted)}%)` : '';
  return `speculation${by}: ${stats.accepted} of ${stats.drafted} drafted tokens accepted${share}, ${((stats.passes + stats.accepted) / stats.passes).toFixed(2)} tokens per pass`;
}

/** A drafter's name as the tooltip says it: "lookup" → "prompt lookup", "draft:X" → "draft model X". */
export function drafterInWords(name: string): string {
  if (name === 'lookup') return 'prompt lookup';
  return name.startsWith('draft:') ? `draft model ${name.slice('draft:'.length)}` : name;
}

/** The note each end reason leaves in the timeline (docs/agent.md, End reasons). */
export function endNote(reason: EndReason, detail: { steps?: number; error?: string; stuck?: string; devices?: number; left?: string; ran?: string[]; notRun?: string[] }): string | null {
  switch (reason) {
    case 'done':
      return null;
    case 'stopped':
      if (detail.ran && detail.ran.length > 0) {
        // Stop landed between calls: say which ran (their changes stand) and which did not.
        return `stopped: ${detail.ran.join(', ')} ran; ${detail.notRun?.length ? `${detail.notRun.join(', ')} did not` : 'no call was left'}`;
      }
      return detail.left
        ? `stopped: ${detail.left} mid-run. The partial answer is kept and none of its calls ran. Re-deal the layers over the devices still in the room, then send the request again`
        : 'stopped: the partial answer is kept and none of its calls ran';
    case 'limit':
      return `stopped after ${detail.steps ?? MAX_STEPS} steps: send "continue", or split the task`;
    case 'context':
      return 'context full: start a new task (the files are kept)';   // the loop says which part is too long (contextFullNote)
    case 'error':
      return `the model failed: ${detail.error ?? 'unknown error'}`;
    case 'stuck': {
      const split = (detail.devices ?? 1) > 1
        ? ` The model is split over ${detail.devices} devices and may be producing bad output: try the request with the model on one device, or re-deal the layers.`
        : ' Rephrase, fix the file by hand, or try a bigger model.';
      return `${detail.stuck ?? 'stuck'}.${split}`;
    }
  }
}

/** What filled the context, in tokens: the parts a person can change, measured when compaction gave up. */
export interface ContextParts {
  budget: number;              // tokens the conversation may use (the context less room for the answer)
  contextSize: number;
  opening: number;             // system prompt and tools: never shortened
  message: number;             // this request's own message
  steps: number;               // this request's answers and tool results, already shortened
  earlier: number;             // earlier requests left after folding and dropping
  total: number;               // the whole prompt: the parts and the assistant header the answer starts after
}

const n = (x: number) => x.toLocaleString('en-US');

/**
 * The end note of a request that does not fit even after compaction: which part is too long and what would
 * fit ("your message alone is 12,903 tokens; 6,980 fit beside the tools"), not only "start a new task".
 */
export function contextFullNote(p: ContextParts): string {
  const room = Math.max(0, p.budget - p.opening);
  const head = `context full: the conversation is ${n(p.total)} tokens, ${n(p.budget)} fit (${n(p.contextSize)} of context less room for the answer)`;
  if (p.opening >= p.budget) return `${head}; the system prompt and tools alone take ${n(p.opening)}: use a bigger context (?ctx=) or a model with a longer one`;
  if (p.message > room) {
    return `${head}; your message alone is ${n(p.message)} tokens and ${n(room)} fit beside the system prompt and tools: shorten it by about ${n(p.message - room)} tokens, split it into smaller requests, or use a bigger context`;
  }
  return `${head}; this request's steps take ${n(p.steps)} after shortening: start a new task (the files are kept) and ask for the rest, or use a bigger context`;
}

