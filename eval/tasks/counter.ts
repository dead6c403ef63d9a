import { must, textOf, type EvalTask } from '../task.ts';

export const counter: EvalTask = {
  id: 'counter',
  title: 'Counter with + and − buttons',
  request: 'Make a counter page: a number shown in an element with id "count" (starts at 0), a button with id "inc" that adds 1 and a button with id "dec" that takes 1 away.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Counter</title></head>
<body>
  <h1>Counter</h1>
  <p id="count">0</p>
  <button id="dec">−</button>
  <button id="inc">+</button>
  <script src="app.js"></script>
</body>
</html>
`,
    'app.js': `let count = 0;
const out = document.getElementById('count');
function show() { out.textContent = String(count); }
document.getElementById('inc').addEventListener('click', () => { count++; show(); });
document.getElementById('dec').addEventListener('click', () => { count--; show(); });
show();
`,
  },
  broken: [{ why: 'the minus button adds', file: 'app.js', from: "count--; show();", to: "count++; show();" }],
  async check(page, url) {
    await page.goto(url);
    must((await textOf(page, '#count')) === '0', `#count starts at "${await textOf(page, '#count')}", not 0`);
    for (let i = 0; i < 3; i++) await page.click('#inc');
    await page.click('#dec');
    const shown = await textOf(page, '#count');
    must(shown === '2', `after +, +, +, − the count shows "${shown}", not 2`);
  },
};
