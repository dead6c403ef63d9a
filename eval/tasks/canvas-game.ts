import { eventually, must, textOf, type EvalTask } from '../task.ts';

export const canvasGame: EvalTask = {
  id: 'canvas-game',
  title: 'Canvas click game with a score',
  request: 'Make a small canvas game: a 300×300 canvas with id "game" and the score in an element with id "score", starting at 0. Each click on the canvas adds one point and draws a filled circle where you clicked.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Dots</title>
<style>canvas { border: 1px solid #333; background: #fff; }</style></head>
<body>
  <h1>Score: <span id="score">0</span></h1>
  <canvas id="game" width="300" height="300"></canvas>
  <script src="game.js"></script>
</body>
</html>
`,
    'game.js': `const canvas = document.getElementById('game');
const ctx = canvas.getContext('2d');
let score = 0;

canvas.addEventListener('click', (e) => {
  const r = canvas.getBoundingClientRect();
  const x = (e.clientX - r.left) * canvas.width / r.width;
  const y = (e.clientY - r.top) * canvas.height / r.height;
  ctx.fillStyle = 'hsl(' + (score * 47 % 360) + ', 70%, 45%)';
  ctx.beginPath();
  ctx.arc(x, y, 12, 0, Math.PI * 2);
  ctx.fill();
  score += 1;
  document.getElementById('score').textContent = String(score);
});
`,
  },
  broken: [{ why: 'clicks draw but do not score', file: 'game.js', from: '  score += 1;\n', to: '' }],
  async check(page, url) {
    await page.goto(url);
    must((await textOf(page, '#score')) === '0', `the score starts at "${await textOf(page, '#score')}", not 0`);
    const box = await page.locator('canvas#game').boundingBox();
    must(box !== null, 'there is no visible canvas#game');
    for (const [fx, fy] of [[0.25, 0.25], [0.5, 0.5], [0.75, 0.7]] as const) await page.mouse.click(box.x + box.width * fx, box.y + box.height * fy);
    await eventually(async () => (await textOf(page, '#score')) === '3', async () => `after three clicks the score shows "${await textOf(page, '#score')}", not 3`);
    // Something was drawn where the middle click landed.
    const painted = await page.evaluate(`(() => {
      const c = document.getElementById('game');
      const d = c.getContext('2d').getImageData(Math.floor(c.width / 2) - 3, Math.floor(c.height / 2) - 3, 6, 6).data;
      let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) n++;
      return n;
    })()`) as number;
    must(painted > 0, 'nothing was drawn on the canvas where it was clicked');
  },
};
