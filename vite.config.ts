import { defineConfig } from 'vite';

// The app is a plain multi-module SPA: index.html + src/ui (Lit). Workers are bundled as ES modules.
export default defineConfig({
  build: { target: 'es2022', outDir: 'dist', sourcemap: true, chunkSizeWarningLimit: 4096 },
  worker: { format: 'es' },
  server: { host: '127.0.0.1' },
});
