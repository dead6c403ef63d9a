import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export async function resolve(specifier, context, next) {
  if (/\.wgsl(\?raw)?$/.test(specifier)) {
    const url = new URL(specifier.replace(/\?raw$/, ''), context.parentURL);
    return { url: url.href + '?raw', shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (/\.wgsl\?raw$/.test(url)) {
    const text = await readFile(fileURLToPath(url.replace(/\?raw$/, '')), 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return next(url, context);
}
