// The page's side of ./cpu-worker.ts: one worker, requests answered in turn by id.
export class CpuWorkerClient {
  private readonly worker = new Worker(new URL('./cpu-worker.ts', import.meta.url), { type: 'module', name: 'pooled-cpu-harness' });
  private next = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor() {
    this.worker.addEventListener('message', (e: MessageEvent<{ id: number; ok: boolean; value?: unknown; error?: string }>) => {
      const w = this.waiting.get(e.data.id);
      this.waiting.delete(e.data.id);
      if (e.data.ok) w?.resolve(e.data.value); else w?.reject(new Error(e.data.error));
    });
    this.worker.addEventListener('error', (e) => {
      for (const w of this.waiting.values()) w.reject(new Error(`the CPU harness worker failed: ${e.message}`));
      this.waiting.clear();
    });
  }

  call<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, ...args });
    });
  }

  terminate(): void { this.worker.terminate(); }
}
