// llama.cpp's side of the GPU bench: node-llama-cpp's prebuilt Vulkan backend on the same GGUF and the
// same adapter, loaded only from what is installed (no build, no download). llama.cpp lists only GPUs
// unless GGML_VK_VISIBLE_DEVICES is set: "0" lets it take a software adapter such as lavapipe, which is
// how the bench runs on CI machines. Its first batch of each size compiles pipelines, so every prompt
// batch is evaluated once (and a few decode steps run) before anything is timed. Decode: greedy, one token a step, no stop tokens.
import type { Token } from 'node-llama-cpp';

export interface LlamaFigures {
  loadSeconds: number;
  prefill: Record<number, number>;
  decode: number;
  gpu: string;
  devices: string[];
}

const promptIds = (n: number, vocab: number): Token[] => Array.from({ length: n }, (_, i) => ((i * 7919 + 13) % vocab) as Token);

export async function benchLlama(gguf: string, opts: { prompts: number[]; decode: number; vocab: number }): Promise<LlamaFigures> {
  process.env.GGML_VK_VISIBLE_DEVICES ??= '0';
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: 'vulkan', build: 'never', skipDownload: true, logLevel: LlamaLogLevel.error, progressLogs: false });
  if (llama.gpu !== 'vulkan') throw new Error(`node-llama-cpp loaded ${String(llama.gpu)}, not its Vulkan backend`);
  const maxPrompt = Math.max(...opts.prompts);
  const t0 = performance.now();
  const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 'max' });
  const context = await model.createContext({ contextSize: maxPrompt + opts.decode + 8, batchSize: maxPrompt, sequences: 1 });
  const seq = context.getSequence();
  const loadSeconds = (performance.now() - t0) / 1000;
  try {
    // warm-up: every batch size timed below once (each compiles its own pipelines), and a few decode steps
    for (const P of opts.prompts) {
      await seq.clearHistory();
      await seq.evaluateWithoutGeneratingNewTokens(promptIds(P, opts.vocab));
    }
    let warm = 0;
    for await (const token of seq.evaluate([1 as Token], { temperature: 0 })) if (void token, ++warm >= 4) break;
    const prefill: Record<number, number> = {};
    for (const P of opts.prompts) {
      await seq.clearHistory();
      const t = performance.now();
      await seq.evaluateWithoutGeneratingNewTokens(promptIds(P, opts.vocab));
      prefill[P] = P / ((performance.now() - t) / 1000);
    }
    // decode after the longest prompt: each step feeds the last pick and samples greedily
    let steps = 0;
    const t = performance.now();
    for await (const token of seq.evaluate([((maxPrompt * 31) % opts.vocab) as Token], { temperature: 0 })) {
      void token;
      if (++steps >= opts.decode) break;
    }
    const decode = steps / ((performance.now() - t) / 1000);
    return { loadSeconds, prefill, decode, gpu: String(llama.gpu), devices: await llama.getGpuDeviceNames() };
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}
