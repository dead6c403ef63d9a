// TypeScript/JSX for the preview: esbuild-wasm, loaded on the first .ts/.tsx/.jsx file served (its wasm
// is ~10 MB, so plain JS sites never pay for it). Browser only: the wasm comes from the package via ?url.
import type { Transpile } from './manifest.ts';
import { extensionOf } from './mime.ts';

let ready: Promise<typeof import('esbuild-wasm')> | undefined;

async function load(): Promise<typeof import('esbuild-wasm')> {
  const [esbuild, wasm] = await Promise.all([import('esbuild-wasm'), import('esbuild-wasm/esbuild.wasm?url')]);
  await esbuild.initialize({ wasmURL: wasm.default, worker: true });
  return esbuild;
}

/** Transforms one file (imports stay imports; the preview links modules itself). Errors name file:line:col. */
export const esbuildTranspile: Transpile = async (code, path) => {
  ready ??= load();
  const esbuild = await ready;
  const ext = extensionOf(path);
  try {
    const out = await esbuild.transform(code, {
      loader: ext === 'tsx' ? 'tsx' : ext === 'jsx' ? 'jsx' : 'ts',
      format: 'esm', target: 'es2022', sourcefile: path, sourcemap: 'inline',
    });
    return { code: out.code };
  } catch (e) {
    const first = (e as { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }).errors?.[0];
    if (!first) return { error: `${path}: ${(e as Error).message}` };
    const loc = first.location;
    return { error: loc ? `${loc.file}:${loc.line}:${loc.column + 1} ${first.text}` : `${path}: ${first.text}` };
  }
};
