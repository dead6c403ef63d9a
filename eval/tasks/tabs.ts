import { must, type EvalTask } from '../task.ts';

export const tabs: EvalTask = {
  id: 'tabs',
  title: 'Tabs',
  request: 'Make a page with three tabs: buttons with class "tab" and data-tab="1", "2", "3", and panels with ids "panel-1", "panel-2", "panel-3". Only the panel of the clicked tab is visible; the first is visible at the start.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Tabs</title>
<style>
  .tab.active { font-weight: bold; }
  .panel { padding: 1rem; border: 1px solid #ccc; }
  .panel[hidden] { display: none; }
</style></head>
<body>
  <nav>
    <button class="tab active" data-tab="1">Home</button>
    <button class="tab" data-tab="2">About</button>
    <button class="tab" data-tab="3">Contact</button>
  </nav>
  <section class="panel" id="panel-1">Welcome home.</section>
  <section class="panel" id="panel-2" hidden>About us.</section>
  <section class="panel" id="panel-3" hidden>Write to us.</section>
  <script src="tabs.js"></script>
</body>
</html>
`,
    'tabs.js': `const tabs = document.querySelectorAll('.tab');
function select(n) {
  tabs.forEach((t) => t.classList.toggle('active', t.dataset.tab === n));
  document.querySelectorAll('.panel').forEach((p) => { p.hidden = p.id !== 'panel-' + n; });
}
tabs.forEach((t) => t.addEventListener('click', () => select(t.dataset.tab)));
select('1');
`,
  },
  broken: [{ why: 'the other panels stay visible', file: 'tabs.js', from: "p.hidden = p.id !== 'panel-' + n;", to: "p.hidden = false;" }],
  async check(page, url) {
    await page.goto(url);
    const visible = async () => {
      const out: string[] = [];
      for (const n of ['1', '2', '3']) if (await page.locator(`#panel-${n}`).isVisible()) out.push(n);
      return out.join(',');
    };
    must((await visible()) === '1', `at the start the visible panels are [${await visible()}], not [1]`);
    await page.click('.tab[data-tab="2"]');
    must((await visible()) === '2', `after clicking tab 2 the visible panels are [${await visible()}], not [2]`);
    await page.click('.tab[data-tab="3"]');
    must((await visible()) === '3', `after clicking tab 3 the visible panels are [${await visible()}], not [3]`);
  },
};
