import { eventually, must, type EvalTask } from '../task.ts';

const swatch = (fill: string, label: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="${fill}"/><text x="200" y="160" font-size="48" text-anchor="middle" fill="#fff">${label}</text></svg>\n`;

export const gallery: EvalTask = {
  id: 'gallery',
  title: 'Image gallery with a lightbox',
  request: 'Make an image gallery of the three pictures in images/ (red.svg, green.svg, blue.svg) as thumbnails with class "thumb". Clicking one opens a lightbox with id "lightbox" showing that picture large in an <img> inside it; Escape or a click on the lightbox closes it.',
  solution: {
    'images/red.svg': swatch('#c0392b', 'red'),
    'images/green.svg': swatch('#27ae60', 'green'),
    'images/blue.svg': swatch('#2980b9', 'blue'),
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Gallery</title>
<style>
  .thumb { width: 120px; cursor: zoom-in; margin: 4px; }
  #lightbox { position: fixed; inset: 0; background: rgba(0,0,0,.85); display: none; align-items: center; justify-content: center; }
  #lightbox.open { display: flex; }
  #lightbox img { max-width: 90vw; max-height: 90vh; }
</style></head>
<body>
  <h1>Gallery</h1>
  <img class="thumb" src="images/red.svg" alt="red">
  <img class="thumb" src="images/green.svg" alt="green">
  <img class="thumb" src="images/blue.svg" alt="blue">
  <div id="lightbox"><img alt=""></div>
  <script src="gallery.js"></script>
</body>
</html>
`,
    'gallery.js': `const box = document.getElementById('lightbox');
const big = box.querySelector('img');
function open(src) { big.src = src; box.classList.add('open'); }
function close() { box.classList.remove('open'); }
document.querySelectorAll('.thumb').forEach((t) => t.addEventListener('click', () => open(t.getAttribute('src'))));
box.addEventListener('click', close);
document.addEventListener('keydown', (e) => { if (e.key === 'Escape') close(); });
`,
  },
  broken: [{ why: 'Escape does not close the lightbox', file: 'gallery.js', from: "if (e.key === 'Escape') close();", to: "if (e.key === 'Esc') close();" }],
  async check(page, url) {
    await page.goto(url);
    const thumbs = page.locator('.thumb');
    must((await thumbs.count()) === 3, `there are ${await thumbs.count()} .thumb elements, not 3`);
    const box = page.locator('#lightbox');
    must(!(await box.isVisible()), 'the lightbox is open before any click');
    await thumbs.nth(1).click();
    await eventually(() => box.isVisible(), () => 'clicking the second thumbnail did not show #lightbox');
    const src = (await box.locator('img').first().getAttribute('src')) ?? '';
    must(/green\.svg$/.test(src), `the lightbox shows "${src}", not green.svg`);
    const loaded = await box.locator('img').first().evaluate((img) => (img as HTMLImageElement).naturalWidth > 0);
    must(loaded, 'the lightbox picture did not load');
    await page.keyboard.press('Escape');
    await eventually(async () => !(await box.isVisible()), () => 'Escape did not close the lightbox');
    await thumbs.nth(2).click();
    await eventually(() => box.isVisible(), () => 'clicking the third thumbnail did not show #lightbox');
    await box.click({ position: { x: 5, y: 5 } });
    await eventually(async () => !(await box.isVisible()), () => 'a click on the lightbox did not close it');
  },
};
