// CPU engine harness: window.cpuGreedy({ model, ids, tokens, threads }) loads the model at URL `model`
// (a safetensors or MLC folder, or a .gguf file) into the WASM engine and greedy-generates `tokens`
// tokens after the prompt ids: threads 1 on this page's main thread, threads > 1 in ./cpu-worker.ts
// with the thread pool (the page must be cross-origin isolated). One page serves many models in turn,
// so the kernels' fetch and the page's start are paid once. window.__cpu says when it is ready.
import { cpuGreedy, type GreedyRequest, type GreedyResult } from './cpu-run.ts';
import { CpuWorkerClient } from './cpu-worker-client.ts';

const logEl = document.getElementById('log')!;
const log = (line: string): void => { logEl.textContent += `${line}\n`; };
let worker: CpuWorkerClient | undefined;

async function greedy(r: GreedyRequest): Promise<GreedyResult> {
  const t0 = performance.now();
  const result = r.threads > 1 ? await (worker ??= new CpuWorkerClient()).call<GreedyResult>('greedy', { ...r }) : await cpuGreedy(r);
  log(`${r.model} (${result.threads} thread${result.threads > 1 ? 's' : ''}, ${((performance.now() - t0) / 1000).toFixed(1)} s): ${result.ids.join(' ')}`);
  return result;
}

const w = window as unknown as { cpuGreedy: typeof greedy; __cpu: { ready: boolean; isolated: boolean } };
w.cpuGreedy = greedy;
w.__cpu = { ready: true, isolated: crossOriginIsolated };
