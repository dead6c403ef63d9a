// `npm run bench -- --peers`: prefill and decode tok/s of our engine on random weights of the Qwen3-0.6B
// shape (64-token prompt, 32 decode tokens, medians of 3) in q4f16_1 and BF16, beside the copy roofline
// (decode tok/s if every weight byte moved at the copy kernel's speed). With LLAMA_BENCH=/path/to/llama-bench
// the same weights are written as GGUF (Q4_0 / BF16) and llama.cpp runs on the same adapter in the same
// run (GGML_VK_VISIBLE_DEVICES=0, all layers and the tied head on the adapter) between two rounds of ours
// (ours, llama.cpp, ours: drift in the machine's load falls on both); the ratios are printed.
// PEER_FORMATS=q4f16_1 (or BF16) runs one format. How to build llama.cpp's Vulkan backend:
// docs/peer-benchmarks.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { adapterLabel, summarizeAdapter } from '../../src/gpu/adapter.ts';
import { createWebGPUEngine } from '../../src/gpu/create-engine.ts';
import { copyOp } from '../../src/gpu/kernels/common/copy.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import type { ModelWeights } from '../../src/model/types.ts';
import { benchDevice, timeSubmits } from '../gpu-bench-helpers.ts';
import { QWEN3_0_6B, randomPeerModel, writePeerGguf, type PeerFormat } from './models.ts';
import { decodeNext, sampleNext } from '../../src/model/engine-types.ts';

export const title = 'Peers: Qwen3-0.6B shape, random weights, prefill 64 / decode 32 tok/s (medians of 3)';

const PROMPT = Number(process.env.PEER_PROMPT ?? 64);
const GEN = Number(process.env.PEER_GEN ?? 32);
const REPS = Number(process.env.PEER_REPS ?? 3);

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

async function copyGBs(device: GPUDevice): Promise<number> {
  const bytes = 32 * 2 ** 20;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const src = device.createBuffer({ size: bytes, usage });
  const dst = device.createBuffer({ size: bytes, usage });
  const op = copyOp(new PipelineCache(device, false), { src, dst }, bytes / 16, 256);
  const t = await timeSubmits(device, 5, (pass) => { for (let i = 0; i < 4; i++) op.encode(pass, 1); });
  src.destroy();
  dst.destroy();
  return (2 * bytes * 4) / t / 1e9;
}

interface Speeds { prefill: number; decode: number }

/** Our engine on `weights`, loaded and warmed up once; `measure` times REPS prefills and decodes. */
interface Ours { bytes: number; measure(): Promise<{ prefill: number[]; decode: number[] }>; dispose(): Promise<void> }

async function loadOurs(weights: ModelWeights, device: GPUDevice, out: Record<string, number | string>, label: string): Promise<Ours> {
  const cfg = weights.config;
  const engine = await createWebGPUEngine(weights, { device, ctx: PROMPT + GEN + 8, maxBatch: PROMPT });
  const s0 = engine.stats();
  out[`${label} ours: weight MB`] = s0.weightBytes / 1e6;
  out[`${label} ours: kernels`] = s0.kernels;
  const ids = Array.from({ length: PROMPT }, (_, i) => (i * 7919 + 13) % cfg.vocabSize);
  const L = cfg.numLayers;
  const prefillOnce = async (): Promise<[number, number]> => {
    await engine.truncate(0);
    const t0 = performance.now();
    const hidden = await engine.runLayers([0, L], 0, await engine.embed(ids));
    const first = await sampleNext(engine, hidden, { temperature: 0 });
    return [performance.now() - t0, first];
  };
  const decodeFrom = async (first: number): Promise<number> => {
    let id = first;
    const t0 = performance.now();
    for (let i = 0; i < GEN; i++) id = await decodeNext(engine, id, { temperature: 0 });
    return performance.now() - t0;
  };
  await decodeFrom((await prefillOnce())[1]);                   // warm up: every pipeline compiled
  return {
    bytes: s0.weightBytes,
    async measure() {
      const prefill: number[] = [];
      const decode: number[] = [];
      for (let r = 0; r < REPS; r++) {
        const [ms, first] = await prefillOnce();
        prefill.push(PROMPT / (ms / 1000));
        decode.push(GEN / ((await decodeFrom(first)) / 1000));
      }
      return { prefill, decode };
    },
    dispose: () => engine.dispose(),
  };
}

function llama(bin: string, gguf: string, format: PeerFormat, headOnAdapter: boolean): Speeds {
  const args = ['-m', gguf, '-p', String(PROMPT), '-n', String(GEN), '-r', String(REPS), '-o', 'json', '-ngl', '99'];
  if (headOnAdapter) args.push('-ot', 'token_embd\\.weight=Vulkan0');
  const r = spawnSync(bin, args, {
    encoding: 'utf8', maxBuffer: 1 << 26, timeout: 3_600_000,
    env: { ...process.env, GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? '0' },
  });
  if (r.status !== 0) throw new Error(`llama-bench (${format}) exited ${r.status}: ${(r.stderr ?? '').slice(-2000)}`);
  const results = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as { n_prompt: number; n_gen: number; samples_ts: number[] }[];
  const pp = results.find((x) => x.n_prompt === PROMPT && x.n_gen === 0);
  const tg = results.find((x) => x.n_gen === GEN && x.n_prompt === 0);
  if (!pp || !tg) throw new Error(`llama-bench (${format}): no pp${PROMPT}/tg${GEN} results in ${r.stdout.slice(0, 500)}`);
  return { prefill: median(pp.samples_ts), decode: median(tg.samples_ts) };
}

export async function run(): Promise<Record<string, number | string>> {
  const { device, adapter } = await benchDevice();
  const out: Record<string, number | string> = {
    adapter: adapterLabel(summarizeAdapter(adapter)), shape: 'Qwen3-0.6B (28 layers, hidden 1024, 16/8 heads of 128, intermediate 3072, vocab 151936)',
    workload: `prompt ${PROMPT}, decode ${GEN}, medians of ${REPS}`,
  };
  const bench = process.env.LLAMA_BENCH;
  const dir = mkdtempSync(path.join(tmpdir(), 'pooled-peers-'));
  try {
    const formats = (process.env.PEER_FORMATS ?? 'q4f16_1,BF16').split(',').filter((f): f is PeerFormat => f === 'q4f16_1' || f === 'BF16');
    for (const format of formats) {
      try {
        await peerFormat(format, device, bench, dir, out);
      } catch (e) {
        out[`${format} failed`] = String((e as Error).message).slice(0, 500);   // keep the other format's figures
      }
    }
    if (!bench) out['llama.cpp'] = 'set LLAMA_BENCH=/path/to/llama-bench to run it on the same weights (docs/peer-benchmarks.md)';
  } finally {
    rmSync(dir, { recursive: true, force: true });
    device.destroy();
  }
  return out;
}

/**
 * One format: ours, then llama.cpp, then ours again on the same loaded engine, so that a change of load
 * on the shared machine during the run falls on both engines alike; ours is the median of both rounds.
 */
async function peerFormat(format: PeerFormat, device: GPUDevice, bench: string | undefined, dir: string, out: Record<string, number | string>): Promise<void> {
  const weights = randomPeerModel(QWEN3_0_6B, format);
  const copy = await copyGBs(device);
  const mine = await loadOurs(weights, device, out, format);
  try {
    const before = await mine.measure();
    out[`${format} copy GB/s (read + write)`] = copy;
    out[`${format} roofline decode tok/s (weights at copy speed)`] = (copy * 1e9) / mine.bytes;
    if (!bench) {
      out[`${format} ours prefill tok/s`] = median(before.prefill);
      out[`${format} ours decode tok/s`] = median(before.decode);
      return;
    }
    const gguf = path.join(dir, `${format}.gguf`);
    writePeerGguf(gguf, weights);
    // The tied head on the adapter, as ours; where llama.cpp's Vulkan backend cannot hold it there
    // (no BF16 get_rows), it keeps it on the CPU, and the figure says so.
    let peer: Speeds;
    let peerName = format === 'q4f16_1' ? 'llama.cpp Vulkan Q4_0' : 'llama.cpp Vulkan BF16';
    try {
      peer = llama(bench, gguf, format, true);
    } catch (e) {
      out[`${format} llama.cpp with the head on the adapter`] = String((e as Error).message).split('\n').filter((l) => /cannot|error|exited/i.test(l)).join(' ').slice(0, 300);
      peer = llama(bench, gguf, format, false);
      peerName += ' (tied head on the CPU)';
    }
    rmSync(gguf);
    const after = await mine.measure();
    const prefill = median([...before.prefill, ...after.prefill]);
    const decode = median([...before.decode, ...after.decode]);
    out[`${format} ours prefill tok/s (before / after llama.cpp)`] = `${median(before.prefill).toPrecision(3)} / ${median(after.prefill).toPrecision(3)}`;
    out[`${format} ours decode tok/s (before / after llama.cpp)`] = `${median(before.decode).toPrecision(3)} / ${median(after.decode).toPrecision(3)}`;
    out[`${format} ours prefill tok/s`] = prefill;
    out[`${format} ours decode tok/s`] = decode;
    out[`${format} ${peerName} prefill tok/s`] = peer.prefill;
    out[`${format} ${peerName} decode tok/s`] = peer.decode;
    out[`${format} ours / llama.cpp prefill`] = prefill / peer.prefill;
    out[`${format} ours / llama.cpp decode`] = decode / peer.decode;
  } finally {
    await mine.dispose();
  }
}
