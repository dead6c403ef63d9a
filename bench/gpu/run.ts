// `npm run bench -- --gpu`: our engine beside llama.cpp's Vulkan backend on the same adapter and the same
// synthetic full-size Q4_K_M GGUFs (./synth-gguf.ts): prefill tok/s at each prompt length, decode tok/s,
// load seconds, one layer's per-op profile, host ms per decode token outside the kernels, and the ratios,
// written to bench-results/gpu.json. Options (docs/peer-benchmarks.md):
//   --shapes 0.6b,8b,30b-a3b   which shapes (./shapes.ts; `tiny` is the test's)
//   --prompts 512,4096         prompt lengths timed for prefill
//   --decode 128               greedy decode steps timed after the longest prompt
//   --dir DIR                  where the GGUFs are written and reused (default bench-results/gguf)
//   --no-peer                  our engine only (no node-llama-cpp)
//   --out FILE                 the JSON (default bench-results/gpu.json)
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { adapterLabel, summarizeAdapter } from '../../src/gpu/adapter.ts';
import { benchDevice } from '../gpu-bench-helpers.ts';
import { benchLlama, type LlamaFigures } from './llama.ts';
import { benchOurs, type OursFigures } from './ours.ts';
import { pickShapes } from './shapes.ts';
import { synthGguf } from './synth-gguf.ts';

export interface GpuBenchOptions {
  shapes: string;
  prompts: number[];
  decode: number;
  dir: string;
  peer: boolean;
  out: string;
  profile: boolean;
}

export interface ShapeResult {
  label: string;
  fileMB: number;
  tensorTypes: Record<string, number>;
  ours?: OursFigures;
  oursError?: string;
  llama?: LlamaFigures;
  llamaError?: string;
  ratios?: Record<string, number>;   // ours / llama.cpp
}

export interface GpuBenchReport {
  date: string;
  adapter: string;
  workload: string;
  shapes: Record<string, ShapeResult>;
}

const positiveInts = (flag: string, s: string): number[] => s.split(',').map((x) => {
  const n = Number(x);
  if (!(Number.isInteger(n) && n > 0)) throw new Error(`${flag}: ${JSON.stringify(x)} is not a positive whole number`);
  return n;
});

export function parseGpuBenchArgs(argv: string[]): GpuBenchOptions {
  const { values } = parseArgs({
    args: argv, strict: true, allowPositionals: false,
    options: {
      gpu: { type: 'boolean' }, shapes: { type: 'string' }, prompts: { type: 'string' }, decode: { type: 'string' },
      dir: { type: 'string' }, 'no-peer': { type: 'boolean' }, out: { type: 'string' }, 'no-profile': { type: 'boolean' },
    },
  });
  return {
    shapes: values.shapes ?? '0.6b,8b,30b-a3b',
    prompts: positiveInts('--prompts', values.prompts ?? '512,4096'),
    decode: positiveInts('--decode', values.decode ?? '128')[0]!,
    dir: path.resolve(values.dir ?? path.join('bench-results', 'gguf')),
    peer: !values['no-peer'],
    out: path.resolve(values.out ?? path.join('bench-results', 'gpu.json')),
    profile: !values['no-profile'],
  };
}

const errorText = (e: unknown): string => String((e as Error)?.stack ?? e).slice(0, 2000);

export async function runGpuBench(o: GpuBenchOptions, log: (line: string) => void = console.log): Promise<GpuBenchReport> {
  const shapes = pickShapes(o.shapes);
  const { device, adapter } = await benchDevice();
  const report: GpuBenchReport = {
    date: new Date().toISOString(), adapter: adapterLabel(summarizeAdapter(adapter)),
    workload: `prefill ${o.prompts.join(' and ')} tokens, decode ${o.decode} greedy after the longest, Q4_K_M synthetic weights`,
    shapes: {},
  };
  log(`adapter: ${report.adapter}`);
  try {
    for (const shape of shapes) {
      const file = await synthGguf(o.dir, shape);
      log(`\n## ${shape.label}: ${file.path} (${(file.size / 1e6).toFixed(0)} MB${file.written ? ', written' : ', reused'})`);
      const r: ShapeResult = { label: shape.label, fileMB: file.size / 1e6, tensorTypes: file.types };
      report.shapes[shape.name] = r;
      try {
        r.ours = await benchOurs(device, file.path, { layers: shape.model.layers!, prompts: o.prompts, decode: o.decode, profile: o.profile });
        log(`  ours: load ${r.ours.loadSeconds.toFixed(1)} s, prefill ${fmt(r.ours.prefill)}, decode ${r.ours.decode.toFixed(2)} tok/s, host ${r.ours.hostMsPerToken.toFixed(2)} ms/token`);
        log(`  kernels: ${r.ours.kernels}; prefill step ${r.ours.prefillStep}`);
        if (r.ours.tuned.length) log(`  tuned: ${r.ours.tuned.join('; ')}`);
      } catch (e) {
        r.oursError = errorText(e);
        log(`  ours failed: ${r.oursError}`);
      }
      if (o.peer) {
        try {
          r.llama = await benchLlama(file.path, { prompts: o.prompts, decode: o.decode, vocab: shape.model.vocab ?? 151936 });
          log(`  llama.cpp (${r.llama.devices.join(', ')}): load ${r.llama.loadSeconds.toFixed(1)} s, prefill ${fmt(r.llama.prefill)}, decode ${r.llama.decode.toFixed(2)} tok/s`);
        } catch (e) {
          r.llamaError = errorText(e);
          log(`  llama.cpp failed: ${r.llamaError.split('\n')[0]}`);
        }
      }
      if (r.ours && r.llama) {
        const ratios: Record<string, number> = { decode: r.ours.decode / r.llama.decode };
        for (const P of o.prompts) ratios[`prefill ${P}`] = r.ours.prefill[P]! / r.llama.prefill[P]!;
        r.ratios = ratios;
        log(`  ours / llama.cpp: ${Object.entries(ratios).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
      }
      write(o.out, report);   // after every shape: a long run that dies keeps what it measured
    }
  } finally {
    device.destroy();
  }
  write(o.out, report);
  log(`\nwrote ${o.out}`);
  return report;
}

function fmt(prefill: Record<number, number>): string {
  return Object.entries(prefill).map(([p, v]) => `${p}: ${v.toFixed(1)}`).join(', ') + ' tok/s';
}

function write(out: string, report: GpuBenchReport): void {
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(report, null, 2));
}
