// Finds the module specifiers of a JS source (static import/export … from, import 'x', import('x')) so the
// preview can point them at the served files without reprinting the code: every other character stays
// where it was, so line:column in the page's errors match the file the agent wrote.
//
// A small scanner, not a parser: it skips comments, strings, template literals (with ${} nesting) and
// regex literals (told apart from division by the previous token), and looks at `import`/`export`
// keywords only outside of those. Broken code never throws here; the browser reports the syntax error.

export interface SpecifierSite {
  /** index of the first character inside the quotes */
  start: number;
  /** index just past the last character inside the quotes */
  end: number;
  value: string;
  kind: 'static' | 'dynamic';
}

const REGEX_AFTER_WORDS = new Set([
  'return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else',
  'yield', 'await', 'extends',
]);

const isIdentStart = (c: string) => /[A-Za-z_$\u0080-\uffff]/.test(c);
const isIdentPart = (c: string) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);

export function findSpecifiers(src: string): SpecifierSite[] {
  const sites: SpecifierSite[] = [];
  const n = src.length;
  let i = 0;
  // What came before, to tell `/re/` from `a / b`: 'value' (ident, number, string, `)`, `]`, `}`) or 'other'.
  let prev: 'value' | 'other' = 'other';
  let prevChar = '';
  const braceStack: ('code' | 'template')[] = [];

  const skipBlank = (j: number): number => {
    while (j < n) {
      const c = src[j]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\u00a0' || c === '\ufeff') j++;
      else if (c === '/' && src[j + 1] === '/') { while (j < n && src[j] !== '\n') j++; }
      else if (c === '/' && src[j + 1] === '*') { const e = src.indexOf('*/', j + 2); j = e < 0 ? n : e + 2; }
      else break;
    }
    return j;
  };
  /** j at a quote: returns the index past the closing quote. */
  const skipString = (j: number): number => {
    const q = src[j];
    j++;
    while (j < n && src[j] !== q) {
      if (src[j] === '\\') j++;
      else if (src[j] === '\n') return j; // unterminated: stop at the line end
      j++;
    }
    return j + 1;
  };
  /** j inside a template literal: returns where its text stops (at '`' past the end, or just past '${'). */
  const scanTemplateText = (j: number): { at: number; opensExpr: boolean } => {
    while (j < n) {
      const c = src[j]!;
      if (c === '\\') { j += 2; continue; }
      if (c === '`') return { at: j + 1, opensExpr: false };
      if (c === '$' && src[j + 1] === '{') return { at: j + 2, opensExpr: true };
      j++;
    }
    return { at: n, opensExpr: false };
  };
  const skipRegex = (j: number): number => {
    j++;
    let inClass = false;
    while (j < n) {
      const c = src[j]!;
      if (c === '\\') { j += 2; continue; }
      if (c === '\n') return j;
      if (inClass) { if (c === ']') inClass = false; }
      else if (c === '[') inClass = true;
      else if (c === '/') { j++; break; }
      j++;
    }
    while (j < n && isIdentPart(src[j]!)) j++; // flags
    return j;
  };
  const stringAt = (j: number, kind: SpecifierSite['kind']): boolean => {
    const q = src[j];
    if (q !== '"' && q !== "'") return false;
    const end = skipString(j);
    if (src[end - 1] !== q) return false;
    sites.push({ start: j + 1, end: end - 1, value: src.slice(j + 1, end - 1), kind });
    return true;
  };
  /** From j (after `import`/`export`), walks the clause to `from '…'`; gives up at ';' or a string. */
  const clauseThenFrom = (j: number): void => {
    let depth = 0;
    for (let guard = 0; guard < 500 && j < n; guard++) {
      j = skipBlank(j);
      const c = src[j];
      if (c === undefined || c === ';' || c === '(' || c === '=') return;
      if (c === '{') { depth++; j++; continue; }
      if (c === '}') { depth--; j++; continue; }
      if (c === '"' || c === "'") { if (depth === 0) return; j = skipString(j); continue; }
      if (isIdentStart(c)) {
        let e = j;
        while (e < n && isIdentPart(src[e]!)) e++;
        const word = src.slice(j, e);
        if (depth === 0 && word === 'from') { stringAt(skipBlank(e), 'static'); return; }
        if (depth === 0 && !['as', 'type', 'typeof', 'default'].includes(word) && prevWordEndsClause(j)) return;
        j = e;
        continue;
      }
      j++;
    }
  };
  // `import a b` cannot happen; `export const x` / `export function` / `export default expr` end the look.
  const prevWordEndsClause = (j: number): boolean => {
    let e = j;
    while (e < n && isIdentPart(src[e]!)) e++;
    const word = src.slice(j, e);
    return ['const', 'let', 'var', 'function', 'class', 'async', 'enum', 'interface', 'abstract', 'declare', 'namespace'].includes(word);
  };

  while (i < n) {
    const c = src[i]!;
    if (c === '/' && (src[i + 1] === '/' || src[i + 1] === '*')) { i = skipBlank(i); continue; }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') { i++; continue; }
    if (c === '"' || c === "'") { i = skipString(i); prev = 'value'; prevChar = c; continue; }
    if (c === '`') {
      const t = scanTemplateText(i + 1);
      i = t.at;
      if (t.opensExpr) { braceStack.push('template'); prev = 'other'; } else prev = 'value';
      continue;
    }
    if (c === '{') { braceStack.push('code'); i++; prev = 'other'; prevChar = c; continue; }
    if (c === '}') {
      const top = braceStack.pop();
      if (top === 'template') {
        const t = scanTemplateText(i + 1);
        i = t.at;
        if (t.opensExpr) { braceStack.push('template'); prev = 'other'; } else prev = 'value';
        continue;
      }
      i++; prev = 'value'; prevChar = c; continue;
    }
    if (c === '/') {
      if (prev === 'other') { i = skipRegex(i); prev = 'value'; continue; }
      i++; prev = 'other'; prevChar = c; continue;
    }
    if (isIdentStart(c)) {
      let e = i;
      while (e < n && isIdentPart(src[e]!)) e++;
      const word = src.slice(i, e);
      const afterDot = prevChar === '.' && src[i - 1] === '.';
      if (!afterDot && word === 'import') {
        const j = skipBlank(e);
        if (src[j] === '(') {
          stringAt(skipBlank(j + 1), 'dynamic');
        } else if (src[j] === '{' || src[j] === '*' || (src[j] !== undefined && isIdentStart(src[j]!))) {
          clauseThenFrom(j);
        } else {
          stringAt(j, 'static');
        }
      } else if (!afterDot && word === 'export') {
        const j = skipBlank(e);
        if (src[j] === '*' || src[j] === '{') clauseThenFrom(j);
      }
      i = e;
      prev = REGEX_AFTER_WORDS.has(word) ? 'other' : 'value';
      prevChar = 'a';
      continue;
    }
    if (/[0-9]/.test(c)) {
      while (i < n && /[0-9A-Za-z_.]/.test(src[i]!)) i++;
      prev = 'value'; prevChar = '0';
      continue;
    }
    prev = c === ')' || c === ']' ? 'value' : 'other';
    prevChar = c;
    i++;
  }
  return sites;
}

/**
 * Replaces each specifier for which `map` returns a string (others stay). Only the text between the
 * quotes changes, so no line moves.
 */
export function rewriteSpecifiers(src: string, map: (spec: string, kind: SpecifierSite['kind']) => string | null): string {
  const sites = findSpecifiers(src);
  let out = '';
  let at = 0;
  for (const s of sites) {
    const to = map(s.value, s.kind);
    if (to === null) continue;
    out += src.slice(at, s.start) + to.replace(/["'\\\n]/g, (ch) => '%' + ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
    at = s.end;
  }
  return out + src.slice(at);
}
