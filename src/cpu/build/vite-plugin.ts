// The Vite side of the WASM kernels: serves the compiled src/cpu/asm/ at `<base>cpu-kernels.wasm` in
// the dev server (and `cpu-kernels-threads.wasm`, on a shared memory) and emits both into every build, compiled from source each time (cached by hash), so
// `npm start` needs nothing but npm packages and no binary is committed.
import type { Plugin } from 'vite';
import { KERNEL_FILE, THREADED_KERNEL_FILE } from '../kernel-binary.ts';
import { kernelBinary } from './compile-kernels.ts';

export function cpuKernelsPlugin(): Plugin {
  let base = '/';
  return {
    name: 'pooled-cpu-kernels',
    configResolved(config) { base = config.base; },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const file = req.url?.split('?')[0];
        if (file !== `${base}${KERNEL_FILE}` && file !== `${base}${THREADED_KERNEL_FILE}`) { next(); return; }
        kernelBinary(file.endsWith(THREADED_KERNEL_FILE) ? 'threads' : 'simd').then((b) => {
          res.setHeader('Content-Type', 'application/wasm');
          res.end(b);
        }, next);
      });
    },
    async generateBundle() {
      this.emitFile({ type: 'asset', fileName: KERNEL_FILE, source: await kernelBinary('simd') });
      this.emitFile({ type: 'asset', fileName: THREADED_KERNEL_FILE, source: await kernelBinary('threads') });
    },
  };
}
