// Timing GPU work for benches and profiles: wall time of one submit, waited for with onSubmittedWorkDone.
// The first run compiles pipelines and warms caches, so it is not counted.
import type { Op } from './op.ts';

/** Median seconds of `reps` runs of `encode` (each one compute pass in one submit, waited for), after one warm-up run. */
export async function timeSubmits(device: GPUDevice, reps: number, encode: (pass: GPUComputePassEncoder) => void): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < reps + 1; r++) {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    encode(pass);
    pass.end();
    const t = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    if (r > 0) times.push((performance.now() - t) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/**
 * Seconds of each op for a step of `n` tokens: every op runs `repeat` times in one submit, the median of
 * `reps` such submits, less an empty submit's time, over `repeat` (the step uniform is already written).
 */
export async function timeOps(device: GPUDevice, ops: readonly Op[], n: number, repeat: number, reps: number): Promise<{ label: string; seconds: number }[]> {
  const time = (encode: (pass: GPUComputePassEncoder) => void): Promise<number> => timeSubmits(device, reps, encode);
  const empty = await time(() => undefined);
  const out: { label: string; seconds: number }[] = [];
  for (const op of ops) {
    if (!(op.runsAt?.(n) ?? true)) continue;     // folded away at this step size (a decode norm)
    const t = await time((pass) => { for (let i = 0; i < repeat; i++) op.encode(pass, n); });
    out.push({ label: op.labelFor?.(n) ?? op.label, seconds: Math.max(0, t - empty) / repeat });
  }
  return out;
}
