import { describe, expect, test } from 'vitest';
import { findSpecifiers, rewriteSpecifiers } from '../../../src/preview/js-imports.ts';

const specs = (src: string) => findSpecifiers(src).map((s) => `${s.kind}:${s.value}`);

describe('findSpecifiers', () => {
  test('every static form', () => {
    const src = [
      `import a from './a.js';`,
      `import * as b from "./b.js"`,
      `import { c, d as e } from './c.js';`,
      `import f, { g } from '../g.js';`,
      `import './side-effect.css.js';`,
      `export * from './star.js';`,
      `export { h } from "./h.js";`,
      `export * as ns from './ns.js';`,
      `import {\n  multi,\n  line,\n} from './multi.js';`,
      `import type { T } from './types.ts';`,
    ].join('\n');
    expect(specs(src)).toEqual([
      'static:./a.js', 'static:./b.js', 'static:./c.js', 'static:../g.js', 'static:./side-effect.css.js',
      'static:./star.js', 'static:./h.js', 'static:./ns.js', 'static:./multi.js', 'static:./types.ts',
    ]);
  });

  test('dynamic import, not import.meta, not a property named import', () => {
    const src = `const m = await import('./lazy.js');\nconsole.log(import.meta.url);\nobj.import('./nope.js');\nconst o = { import: 1, from: './nope2.js' };`;
    expect(specs(src)).toEqual(['dynamic:./lazy.js']);
  });

  test('ignores look-alikes in comments, strings, templates and regexes', () => {
    const src = [
      `// import x from './comment.js'`,
      `/* export * from './block.js' */`,
      `const s = "import y from './string.js'";`,
      "const t = `import z from './template.js' ${import('./in-template.js')}`;",
      `const re = /import q from '.\\/re.js'/g;`,
      `const half = total / 2; const again = x / y; import('./after-division.js');`,
      `export const notFrom = 1;`,
      `export { local };`,
    ].join('\n');
    expect(specs(src)).toEqual(['dynamic:./in-template.js', 'dynamic:./after-division.js']);
  });

  test('regex after return / ( and a quote inside a regex class do not derail the scan', () => {
    const src = `function f(s) { return /["']/.test(s); }\nconst ok = s.split(/'/);\nimport g from './g.js';`;
    expect(specs(src)).toEqual(['static:./g.js']);
  });

  test('broken code does not throw', () => {
    expect(() => findSpecifiers(`import { from '`)).not.toThrow();
    expect(() => findSpecifiers('const x = `unterminated ${')).not.toThrow();
    expect(specs(`import './ok.js'; function (`)).toEqual(['static:./ok.js']);
  });
});

describe('rewriteSpecifiers', () => {
  test('changes only the text between the quotes, so every line stays where it was', () => {
    const src = `import { a } from './a.js';\n\nconst b = await import("./b.js");\nimport React from 'react';\nthrow new Error('line 5');`;
    const out = rewriteSpecifiers(src, (spec) => (spec.startsWith('.') ? `http://v:1/${spec.slice(2)}` : null));
    expect(out).toBe(`import { a } from 'http://v:1/a.js';\n\nconst b = await import("http://v:1/b.js");\nimport React from 'react';\nthrow new Error('line 5');`);
    expect(out.split('\n')).toHaveLength(src.split('\n').length);
  });

  test('a replacement cannot break out of its quotes', () => {
    expect(rewriteSpecifiers(`import './x.js';`, () => `a'b"c\\d`)).toBe(`import 'a%27b%22c%5Cd';`);
  });
});
