// The Vite side of the WASM kernels: serves the compiled src/cpu/asm/ in the dev server and emits every
// build variant into each build, compiled from source each time (cached by hash), so `npm start` needs
// nothing but npm packages and no binary is committed: `<base>cpu-kernels.wasm` (plain SIMD128),
// `cpu-kernels-threads.wasm` (on a shared memory) and their relaxed-SIMD twins; the page loads the one
// src/cpu/simd-path.ts picks for its browser (src/cpu/kernel-binary.ts).
import type { Plugin } from 'vite';
import { kernelFile } from '../kernel-binary.ts';
import { kernelBinary, type KernelVariant } from './compile-kernels.ts';

/** Every file the page may ask for, and the variant compiled into it. */
const FILES: { variant: KernelVariant; file: string }[] = [false, true].flatMap((threads) => (['plain', 'relaxed'] as const).map((path) => kernelFile(threads, path)));

export function cpuKernelsPlugin(): Plugin {
  let base = '/';
  return {
    name: 'pooled-cpu-kernels',
    configResolved(config) { base = config.base; },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const url = req.url?.split('?')[0];
        const hit = FILES.find((f) => url === `${base}${f.file}`);
        if (!hit) { next(); return; }
        kernelBinary(hit.variant).then((b) => {
          res.setHeader('Content-Type', 'application/wasm');
          res.end(b);
        }, next);
      });
    },
    async generateBundle() {
      for (const { variant, file } of FILES) this.emitFile({ type: 'asset', fileName: file, source: await kernelBinary(variant) });
    },
  };
}
