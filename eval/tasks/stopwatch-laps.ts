// Follow-up on the stopwatch task's page: lap times.
import { eventually, must, textOf, type EvalTask } from '../task.ts';
import { stopwatch } from './stopwatch.ts';

export const stopwatchLaps: EvalTask = {
  id: 'stopwatch-laps',
  title: 'Follow-up: lap times for the stopwatch',
  request: 'Add a button with id "lap" to the stopwatch that adds the time shown (like 3.4) as an <li> to a list with id "laps". Reset should clear the laps.',
  given: stopwatch.solution,
  edits: [
    {
      file: 'index.html',
      oldText: '  <button id="reset">Reset</button>\n',
      newText: '  <button id="reset">Reset</button>\n  <button id="lap">Lap</button>\n  <ol id="laps"></ol>\n',
    },
    {
      file: 'stopwatch.js',
      oldText: "const time = document.getElementById('time');\n",
      newText: "const time = document.getElementById('time');\nconst laps = document.getElementById('laps');\n",
    },
    { file: 'stopwatch.js', oldText: '  elapsed = 0;\n', newText: "  elapsed = 0;\n  laps.innerHTML = '';\n" },
    {
      file: 'stopwatch.js',
      oldText: '  show();\n});\nshow();\n',
      newText: `  show();
});
document.getElementById('lap').addEventListener('click', () => {
  const li = document.createElement('li');
  li.textContent = (now() / 1000).toFixed(1);
  laps.appendChild(li);
});
show();
`,
    },
  ],
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
  <button id="lap">Lap</button>
  <ol id="laps"></ol>
  <script src="stopwatch.js"></script>
</body>
</html>
`,
    'stopwatch.js': `let elapsed = 0;      // ms before the current run
let startedAt = null; // performance.now() of the current run
let timer = null;
const time = document.getElementById('time');
const laps = document.getElementById('laps');

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
  laps.innerHTML = '';
  if (startedAt !== null) startedAt = performance.now();
  show();
});
document.getElementById('lap').addEventListener('click', () => {
  const li = document.createElement('li');
  li.textContent = (now() / 1000).toFixed(1);
  laps.appendChild(li);
});
show();
`,
  },
  broken: [
    { why: 'a lap records the time of the last stop', file: 'stopwatch.js', from: 'li.textContent = (now() / 1000).toFixed(1);', to: 'li.textContent = (elapsed / 1000).toFixed(1);' },
    { why: 'reset keeps the laps', file: 'stopwatch.js', from: "  laps.innerHTML = '';\n", to: '' },
  ],
  async check(page, url) {
    await page.goto(url);
    const laps = () => page.locator('#laps li').allTextContents().then((t) => t.map((s) => s.trim()));
    must((await textOf(page, '#time')) === '0.0', `the stopwatch starts at "${await textOf(page, '#time')}", not 0.0`);
    await page.click('#start');
    await page.waitForTimeout(700);
    await page.click('#lap');
    await page.waitForTimeout(700);
    await page.click('#lap');
    await page.click('#stop');
    const stopped = Number(await textOf(page, '#time'));
    await eventually(async () => (await laps()).length === 2, async () => `after two laps #laps has ${JSON.stringify(await laps())}`);
    const [first, second] = (await laps()).map(Number) as [number, number];
    must((await laps()).every((t) => /^\d+\.\d$/.test(t)), `the laps read ${JSON.stringify(await laps())}, not times with one decimal like 3.4`);
    must(first >= 0.4 && first <= 2.0, `the first lap, 0.7 s after start, reads ${first}`);
    must(second > first && second <= stopped, `the second lap reads ${second}: not after the first (${first}) and by the stop (${stopped})`);
    await page.click('#reset');
    must((await textOf(page, '#time')) === '0.0', `after reset the time shows "${await textOf(page, '#time')}": the stopwatch's reset broke`);
    await eventually(async () => (await laps()).length === 0, async () => `after reset #laps still has ${JSON.stringify(await laps())}`);
  },
};
