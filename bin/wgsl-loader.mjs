// Node ESM hook: `import src from '../shaders/x.wgsl?raw'` yields the file's text, as Vite does.
// Lets the same engine code run in the browser (Vite) and in Node CLIs (tsx --import this file).
import { register } from 'node:module';
register(new URL('./wgsl-hooks.mjs', import.meta.url));
