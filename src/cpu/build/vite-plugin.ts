// The Vite side of the WASM kernels: serves the compiled src/cpu/asm/ at `<base>cpu-kernels.wasm` in
// the dev server and emits it into every build, compiled from source each time (cached by hash), so
// `npm start` needs nothing but npm packages and no binary is committed.
import type { Plugin } from 'vite';
import { KERNEL_FILE } from '../kernel-binary.ts';
import { kernelBinary } from './compile-kernels.ts';

export function cpuKernelsPlugin(): Plugin {
  let base = '/';
  return {
    name: 'pooled-cpu-kernels',
    configResolved(config) { base = config.base; },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        if (req.url?.split('?')[0] !== `${base}${KERNEL_FILE}`) { next(); return; }
        kernelBinary('simd').then((b) => {
          res.setHeader('Content-Type', 'application/wasm');
          res.end(b);
        }, next);
      });
    },
    async generateBundle() {
      this.emitFile({ type: 'asset', fileName: KERNEL_FILE, source: await kernelBinary('simd') });
    },
  };
}
