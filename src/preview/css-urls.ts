// Rewrites the references of a stylesheet: url(…) and @import "…". Each reference goes through `map`;
// a null result leaves it as written. Only the reference text changes, so lines stay where they were.

const URL_FN = /url\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|([^)"'\s]*))\s*\)/g;
const IMPORT_STRING = /@import\s+(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')/g;

export function rewriteCssUrls(css: string, map: (ref: string) => string | null): string {
  // Comments are kept verbatim and never rewritten.
  return css.split(/(\/\*[\s\S]*?(?:\*\/|$))/).map((part, i) => {
    if (i % 2 === 1) return part;
    return part
      .replace(URL_FN, (whole, dq?: string, sq?: string, bare?: string) => {
        const ref = dq ?? sq ?? bare ?? '';
        if (ref === '' || ref.startsWith('data:') || ref.startsWith('#')) return whole;
        const to = map(ref);
        return to === null ? whole : `url("${escapeCss(to)}")`;
      })
      .replace(IMPORT_STRING, (whole, dq?: string, sq?: string) => {
        const ref = dq ?? sq ?? '';
        const to = map(ref);
        return to === null ? whole : `@import url("${escapeCss(to)}")`;
      });
  }).join('');
}

/** Every reference, in order (for reports and tests). */
export function cssReferences(css: string): string[] {
  const refs: string[] = [];
  rewriteCssUrls(css, (ref) => (refs.push(ref), null));
  return refs;
}

function escapeCss(url: string): string {
  return url.replace(/["\\\n]/g, (c) => encodeURIComponent(c));
}
