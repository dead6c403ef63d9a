import { defineConfig } from 'vite';
import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';

// The app is index.html + src/ui (Lit). harness/*.html are small diagnostic pages that drive one part
// (engine, room, preview) for the e2e tests; they are built and served beside the app.
const harnessDir = path.resolve(__dirname, 'harness');
const harnessPages = existsSync(harnessDir)
  ? Object.fromEntries(readdirSync(harnessDir).filter((f) => f.endsWith('.html')).map((f) => [`harness/${f.slice(0, -5)}`, path.join(harnessDir, f)]))
  : {};

export default defineConfig({
  build: {
    target: 'es2022', outDir: 'dist', sourcemap: true, chunkSizeWarningLimit: 4096,
    rollupOptions: { input: { main: path.resolve(__dirname, 'index.html'), ...harnessPages } },
  },
  worker: { format: 'es' },
  server: { host: '127.0.0.1' },
});
