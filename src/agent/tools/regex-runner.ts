// Runs a search regex over files in a thread that can be killed: a pattern with catastrophic
// backtracking must never freeze the tab (or the CLI). The thread is ended when the time limit passes.
import { REGEX_WORKER_SOURCE } from './regex-worker-source.ts';

export interface SearchJob {
  pattern: string;
  flags: string;
  files: { path: string; text: string }[];
  maxHits: number;
  lineChars: number;
}
export interface SearchHit { path: string; line: number; text: string }
export type SearchReply = { hits: SearchHit[]; total: number } | { error: string } | { timedOut: true };

/** Runs one job with a time limit; implementations kill the thread on timeout. */
export interface RegexRunner {
  run(job: SearchJob, timeoutMs: number, signal?: AbortSignal): Promise<SearchReply>;
}

/** Minimal shape shared by the browser Worker and Node's worker_threads Worker. */
interface KillableThread {
  post(job: SearchJob): void;
  onReply(fn: (reply: SearchReply) => void, onError: (error: unknown) => void): void;
  kill(): void;
}

async function runInThread(thread: KillableThread, job: SearchJob, timeoutMs: number, signal?: AbortSignal): Promise<SearchReply> {
  return new Promise<SearchReply>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      thread.kill();
      fn();
    };
    const timer = setTimeout(() => finish(() => resolve({ timedOut: true })), timeoutMs);
    const onAbort = () => finish(() => reject(signal?.reason ?? new Error('search stopped')));
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.onReply((reply) => finish(() => resolve(reply)), (error) => finish(() => reject(error)));
    thread.post(job);
  });
}

/** Browser: a Worker made from a Blob URL (no separate file for the bundler to find). */
export class WebWorkerRegexRunner implements RegexRunner {
  async run(job: SearchJob, timeoutMs: number, signal?: AbortSignal): Promise<SearchReply> {
    const url = URL.createObjectURL(new Blob([REGEX_WORKER_SOURCE], { type: 'text/javascript' }));
    const worker = new Worker(url);
    URL.revokeObjectURL(url);
    return runInThread({
      post: (j) => worker.postMessage(j),
      onReply: (fn, onError) => {
        worker.onmessage = (e: MessageEvent<SearchReply>) => fn(e.data);
        worker.onerror = (e) => onError(new Error(e.message));
      },
      kill: () => worker.terminate(),
    }, job, timeoutMs, signal);
  }
}

/** Node: worker_threads, loaded lazily so the browser bundle never sees node:worker_threads. */
export class NodeRegexRunner implements RegexRunner {
  async run(job: SearchJob, timeoutMs: number, signal?: AbortSignal): Promise<SearchReply> {
    const specifier = 'node:worker_threads';
    const { Worker } = (await import(/* @vite-ignore */ specifier)) as typeof import('node:worker_threads');
    const worker = new Worker(REGEX_WORKER_SOURCE, { eval: true });
    return runInThread({
      post: (j) => worker.postMessage(j),
      onReply: (fn, onError) => {
        worker.on('message', fn);
        worker.on('error', onError);
      },
      kill: () => void worker.terminate(),
    }, job, timeoutMs, signal);
  }
}

/** The runner for where this code runs: a Web Worker in browsers, worker_threads in Node. */
export function defaultRegexRunner(): RegexRunner {
  const isNode = typeof process !== 'undefined' && !!process.versions?.node && typeof window === 'undefined';
  return isNode ? new NodeRegexRunner() : new WebWorkerRegexRunner();
}
