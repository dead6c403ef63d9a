// A short measured speed of this device's WebGPU engine, for choosing an engine at join
// (src/room/engine-probe.ts): the engine's own decode matvec (f32 weights [512, 1024], one token) timed
// for about `budgetMs` after one compiling run. GFLOP/s, comparable with the WASM and JS probes' matvecs.
import { fromFloat32 } from '../model/tensor-utils.ts';
import { requestEngineDevice } from './device.ts';
import { destroyLinear, uploadLinear } from './gpu-weights.ts';
import { Epilogue, linearOps } from './kernels/linear/linear.ts';
import { destroyOps, encodeOps } from './op.ts';
import { PipelineCache } from './pipelines.ts';

const ROWS = 512, COLS = 1024;

export async function measureGpuSpeed(adapter: GPUAdapter, budgetMs = 40): Promise<number> {
  const device = await requestEngineDevice({ adapter, useF16: false });
  try {
    const cache = new PipelineCache(device, false);
    const w = Float32Array.from({ length: ROWS * COLS }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5);
    const g = uploadLinear(device, { kind: 'dense', rows: ROWS, cols: COLS, weight: fromFloat32('probe.weight', w, [ROWS, COLS], 'F32') }, device.limits.maxStorageBufferBindingSize);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const step = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const x = device.createBuffer({ size: COLS * 4, usage });
    const y = device.createBuffer({ size: ROWS * 4, usage });
    device.queue.writeBuffer(step, 0, new Uint32Array([1, 0, 0, 0]));
    device.queue.writeBuffer(x, 0, Float32Array.from({ length: COLS }, (_, i) => Math.sin(i)));
    const ops = linearOps(cache, g, { step, x, y, outStride: ROWS, epilogue: Epilogue.STORE });
    const run = async (reps: number): Promise<number> => {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      for (let i = 0; i < reps; i++) encodeOps(pass, ops, 1);
      pass.end();
      const t0 = performance.now();
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      return performance.now() - t0;
    };
    try {
      await run(1);                                                 // compiles the pipeline
      const one = await run(1);
      const reps = Math.max(1, Math.min(256, Math.round(budgetMs / Math.max(0.05, one))));
      const ms = await run(reps);
      return (reps * 2 * ROWS * COLS) / (ms / 1000) / 1e9;
    } finally {
      destroyOps(ops);
      destroyLinear(g);
      [step, x, y].forEach((b) => b.destroy());
    }
  } finally {
    device.destroy();
  }
}
