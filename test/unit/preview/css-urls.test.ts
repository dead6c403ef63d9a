import { expect, test } from 'vitest';
import { cssReferences, rewriteCssUrls } from '../../../src/preview/css-urls.ts';

test('url() in every quoting, @import strings; data: URLs, fragments and comments untouched', () => {
  const css = [
    `@import "base.css";`,
    `@import url('theme.css');`,
    `body { background: url(img/bg.png) repeat; }`,
    `.a { background-image: url( "img/a b.png" ), url('img/c.png'); }`,
    `.b { mask: url(#clip); cursor: url(data:image/png;base64,AAA=), auto; }`,
    `/* url(commented.png) */`,
  ].join('\n');
  expect(cssReferences(css)).toEqual(['theme.css', 'img/bg.png', 'img/a b.png', 'img/c.png', 'base.css']);
  const out = rewriteCssUrls(css, (ref) => (ref === 'img/c.png' ? null : `V/${ref}`));
  expect(out).toBe([
    `@import url("V/base.css");`,
    `@import url("V/theme.css");`,
    `body { background: url("V/img/bg.png") repeat; }`,
    `.a { background-image: url("V/img/a b.png"), url('img/c.png'); }`,
    `.b { mask: url(#clip); cursor: url(data:image/png;base64,AAA=), auto; }`,
    `/* url(commented.png) */`,
  ].join('\n'));
});
