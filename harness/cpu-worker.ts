// A module worker for the CPU harness pages: the WASM engine with its thread pool (Atomics.wait is not
// allowed on a page's main thread, so threads > 1 need a worker). Bench- and test-only; the app's own CPU
// engine worker is another file. Messages: { id, op: 'greedy', ...GreedyRequest } → GreedyResult;
// { id, op: 'load', model, ctx, threads, activations? } once, then { id, op: 'round', promptIds, gen } → Speeds;
// replies { id, ok: true, value } or { id, ok: false, error }.
import type { CpuActivations } from '../src/cpu/wasm-kernels.ts';
import { cpuGreedy, CpuBenchEngine, type GreedyRequest } from './cpu-run.ts';

type Request = { id: number } & (
  | ({ op: 'greedy' } & GreedyRequest)
  | { op: 'load'; model: string; ctx: number; threads: number; activations?: CpuActivations }
  | { op: 'round'; promptIds: number[]; gen: number }
  | { op: 'dispose' });

let bench: CpuBenchEngine | undefined;

async function answer(r: Request): Promise<unknown> {
  switch (r.op) {
    case 'greedy': return cpuGreedy(r);
    case 'load': await bench?.dispose(); bench = await CpuBenchEngine.load(r.model, r.ctx, r.threads, r.activations); return true;
    case 'round': if (!bench) throw new Error('round before load'); return bench.round(r.promptIds, r.gen);
    case 'dispose': await bench?.dispose(); bench = undefined; return true;
  }
}

self.addEventListener('message', (e: MessageEvent<Request>) => {
  answer(e.data).then(
    (value) => postMessage({ id: e.data.id, ok: true, value }),
    (err: Error) => postMessage({ id: e.data.id, ok: false, error: `${err?.name}: ${err?.message}` }),
  );
});
