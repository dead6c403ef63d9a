// scripts/gpu-pack.sh's bundling step: bench/gpu/cli.ts and everything it imports as one ES module for
// Node, the kernels' `.wgsl?raw` imports inlined as strings (as Vite and bin/wgsl-loader.mjs do), npm
// `webgpu` and `node-llama-cpp` left as imports (their native parts ship beside the bundle).
// Usage: node scripts/gpu-pack-bundle.mjs OUT_FILE
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/gpu-pack-bundle.mjs OUT_FILE');

/** `foo.wgsl?raw` → the file's text as the module's default export. */
const rawText = {
  name: 'raw-text',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: path.resolve(args.resolveDir, args.path.slice(0, -'?raw'.length)), namespace: 'raw-text' }));
    b.onLoad({ filter: /.*/, namespace: 'raw-text' }, async (args) => ({ contents: await readFile(args.path, 'utf8'), loader: 'text' }));
  },
};

await build({
  entryPoints: ['bench/gpu/cli.ts'],
  outfile: out,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['webgpu', 'node-llama-cpp'],
  plugins: [rawText],
  // bundled CommonJS dependencies call require(): give the module one
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});
