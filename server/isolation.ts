// The headers that make the app's pages cross-origin isolated, and those a model host sends (README).
/**
 * Cross-origin isolation, so pages have SharedArrayBuffer and the WASM engine its threads
 * (src/cpu/thread-pool.ts). COEP `credentialless` rather than `require-corp`: both let CORS-mode fetch()
 * through (Hugging Face and other model hosts answer with CORS, and the app always fetches models in
 * mode 'cors'), but require-corp also demands a Cross-Origin-Resource-Policy header on every no-cors
 * load, which the model-written preview pages (an <img> or <script> from a CDN) would lose; credentialless
 * loads those without cookies instead. A browser without credentialless (Safari today) ignores it: the
 * page is not isolated and the WASM engine runs one thread, as the device card says. The model files we
 * serve ourselves also say CORP cross-origin, so a page on another origin may load them (README).
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'credentialless',
} as const;
/** What a model host must send for an isolated page on another origin to read its files by Range. */
export const MODEL_HOST_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Length, Content-Range, Accept-Ranges, ETag',
  'Cross-Origin-Resource-Policy': 'cross-origin',
} as const;
