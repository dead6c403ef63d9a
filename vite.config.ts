import { defineConfig } from 'vite';
import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { cpuKernelsPlugin } from './src/cpu/build/vite-plugin.ts';
import { ISOLATION_HEADERS } from './server/isolation.ts';

// The app is index.html + src/ui (Lit). harness/*.html are small diagnostic pages that drive one part
// (engine, room, preview) for the e2e tests; they are built and served beside the app.
const harnessDir = path.resolve(__dirname, 'harness');
const harnessPages = existsSync(harnessDir)
  ? Object.fromEntries(readdirSync(harnessDir).filter((f) => f.endsWith('.html')).map((f) => [`harness/${f.slice(0, -5)}`, path.join(harnessDir, f)]))
  : {};

// @huggingface/gguf re-exports @huggingface/tasks, whose package declares no sideEffects: without this
// the GGUF header parser pulled ≈250 KB of the hub's task catalogue into the app (measured: 259 KB
// minified for `gguf` alone, 68 KB gzipped). Both are side-effect free, so unused exports are dropped.
const pureModules = (id: string): boolean => !/node_modules[\\/]@huggingface[\\/](tasks|gguf)[\\/]/.test(id);
const treeshake = { moduleSideEffects: pureModules };

export default defineConfig({
  // The CPU engine's WASM kernels, compiled from src/cpu/asm/ (AssemblyScript) at build time.
  plugins: [cpuKernelsPlugin()],
  build: {
    target: 'es2022', outDir: 'dist',
    // No source maps shipped by default (they were 3.8 MB of the build); POOLED_SOURCEMAP=1 npm run build for debugging.
    sourcemap: process.env.POOLED_SOURCEMAP === '1', chunkSizeWarningLimit: 4096,
    rollupOptions: { input: { main: path.resolve(__dirname, 'index.html'), ...harnessPages }, treeshake },
  },
  worker: { format: 'es', rollupOptions: { treeshake } },
  // `vite` / `vite preview` isolate the page as `npm start` does (server/isolation.ts).
  server: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  preview: { headers: ISOLATION_HEADERS },
});
