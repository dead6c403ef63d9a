import { must, textOf, type EvalTask } from '../task.ts';

export const stopwatch: EvalTask = {
  id: 'stopwatch',
  title: 'Stopwatch timer',
  request: 'Make a stopwatch: the elapsed seconds with one decimal (like 3.4) in an element with id "time", starting at 0.0, and buttons with ids "start", "stop" and "reset".',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Stopwatch</title>
<style>#time { font: 3rem monospace; }</style></head>
<body>
  <div id="time">0.0</div>
  <button id="start">Start</button>
  <button id="stop">Stop</button>
  <button id="reset">Reset</button>
  <script src="stopwatch.js"></script>
</body>
</html>
`,
    'stopwatch.js': `let elapsed = 0;      // ms before the current run
let startedAt = null; // performance.now() of the current run
let timer = null;
const time = document.getElementById('time');

function now() { return elapsed + (startedAt === null ? 0 : performance.now() - startedAt); }
function show() { time.textContent = (now() / 1000).toFixed(1); }

document.getElementById('start').addEventListener('click', () => {
  if (startedAt !== null) return;
  startedAt = performance.now();
  timer = setInterval(show, 100);
});
document.getElementById('stop').addEventListener('click', () => {
  if (startedAt === null) return;
  elapsed = now();
  startedAt = null;
  clearInterval(timer);
  show();
});
document.getElementById('reset').addEventListener('click', () => {
  elapsed = 0;
  if (startedAt !== null) startedAt = performance.now();
  show();
});
show();
`,
  },
  broken: [{ why: 'stop does not stop it', file: 'stopwatch.js', from: "  if (startedAt === null) return;\n  elapsed = now();\n  startedAt = null;\n  clearInterval(timer);\n", to: '' }],
  async check(page, url) {
    await page.goto(url);
    const seconds = async () => Number((await textOf(page, '#time')).replace(/[^\d.]/g, ''));
    must((await textOf(page, '#time')) === '0.0', `the stopwatch starts at "${await textOf(page, '#time')}", not 0.0`);
    await page.click('#start');
    await page.waitForTimeout(1_300);
    await page.click('#stop');
    const stopped = await seconds();
    must(stopped >= 1.0 && stopped <= 2.5, `after running 1.3 s it shows ${stopped}`);
    await page.waitForTimeout(600);
    must((await seconds()) === stopped, `stopped at ${stopped}, it moved on to ${await seconds()}`);
    await page.click('#reset');
    must((await textOf(page, '#time')) === '0.0', `after reset it shows "${await textOf(page, '#time')}"`);
  },
};
