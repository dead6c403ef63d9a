// Timing GPU work for benches and profiles: wall time of one submit, waited for with onSubmittedWorkDone.
// The first run compiles pipelines and warms caches, so it is not counted.

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
