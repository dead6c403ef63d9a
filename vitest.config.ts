import { defineConfig } from 'vitest/config';

// Three tiers, one runner:
//   unit  — Node, no GPU, no browser: formats, tokenizer, agent, protocol.
//   gpu   — Node + Dawn (npm `webgpu`) on Mesa lavapipe: kernels and whole tiny models vs the reference.
//   e2e   — real Debian Chromium via playwright-core against our own server on 127.0.0.1.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 } },
      {
        test: {
          name: 'gpu', include: ['test/gpu/**/*.test.ts'], environment: 'node',
          testTimeout: 300_000, hookTimeout: 120_000, fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e', include: ['e2e/**/*.test.ts'], environment: 'node',
          globalSetup: ['e2e/global-setup.ts'], testTimeout: 300_000, hookTimeout: 180_000, fileParallelism: false,
        },
      },
    ],
  },
});
