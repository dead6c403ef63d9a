// Follow-up on the counter task's page: a reset button.
import { must, textOf, type EvalTask } from '../task.ts';
import { counter } from './counter.ts';

export const counterReset: EvalTask = {
  id: 'counter-reset',
  title: 'Follow-up: a reset button for the counter',
  request: 'Add a button with id "reset" to the counter that sets the count back to 0.',
  given: counter.solution,
  edits: [
    { file: 'index.html', oldText: '  <button id="inc">+</button>\n', newText: '  <button id="inc">+</button>\n  <button id="reset">Reset</button>\n' },
    {
      file: 'app.js',
      oldText: "document.getElementById('dec').addEventListener('click', () => { count--; show(); });\n",
      newText: "document.getElementById('dec').addEventListener('click', () => { count--; show(); });\n" +
        "document.getElementById('reset').addEventListener('click', () => { count = 0; show(); });\n",
    },
  ],
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Counter</title></head>
<body>
  <h1>Counter</h1>
  <p id="count">0</p>
  <button id="dec">−</button>
  <button id="inc">+</button>
  <button id="reset">Reset</button>
  <script src="app.js"></script>
</body>
</html>
`,
    'app.js': `let count = 0;
const out = document.getElementById('count');
function show() { out.textContent = String(count); }
document.getElementById('inc').addEventListener('click', () => { count++; show(); });
document.getElementById('dec').addEventListener('click', () => { count--; show(); });
document.getElementById('reset').addEventListener('click', () => { count = 0; show(); });
show();
`,
  },
  broken: [
    { why: 'reset only changes the text, not the count', file: 'app.js', from: '{ count = 0; show(); }', to: "{ out.textContent = '0'; }" },
  ],
  async check(page, url) {
    await page.goto(url);
    must((await page.locator('#reset').count()) === 1, 'there is no element with id "reset"');
    for (let i = 0; i < 3; i++) await page.click('#inc');
    await page.click('#dec');
    must((await textOf(page, '#count')) === '2', `after +, +, +, − the count shows "${await textOf(page, '#count')}", not 2: the counter itself broke`);
    await page.click('#reset');
    must((await textOf(page, '#count')) === '0', `after reset the count shows "${await textOf(page, '#count')}", not 0`);
    await page.click('#inc');
    must((await textOf(page, '#count')) === '1', `after reset and + the count shows "${await textOf(page, '#count')}", not 1: reset did not reset the count itself`);
  },
};
