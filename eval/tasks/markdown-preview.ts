import { eventually, textOf, type EvalTask } from '../task.ts';

export const markdownPreview: EvalTask = {
  id: 'markdown-preview',
  title: 'Markdown previewer',
  request: 'Make a markdown previewer without libraries: a textarea with id "source" and, next to it, an element with id "preview" that shows the rendered HTML as you type. Support # and ## headings, **bold**, *italic* and "- " list items.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Markdown</title>
<style>main { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; } textarea { height: 20rem; }</style></head>
<body>
  <main>
    <textarea id="source"># Hello</textarea>
    <div id="preview"></div>
  </main>
  <script src="markdown.js"></script>
</body>
</html>
`,
    'markdown.js': `function escapeHtml(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function inline(s) {
  return escapeHtml(s)
    .replace(/\\*\\*(.+?)\\*\\*/g, '<strong>$1</strong>')
    .replace(/\\*(.+?)\\*/g, '<em>$1</em>');
}

function render(md) {
  const out = [];
  let list = false;
  for (const line of md.split('\\n')) {
    const item = /^- (.*)/.exec(line);
    if (item && !list) { out.push('<ul>'); list = true; }
    if (!item && list) { out.push('</ul>'); list = false; }
    if (item) out.push('<li>' + inline(item[1]) + '</li>');
    else if (line.startsWith('## ')) out.push('<h2>' + inline(line.slice(3)) + '</h2>');
    else if (line.startsWith('# ')) out.push('<h1>' + inline(line.slice(2)) + '</h1>');
    else if (line.trim() !== '') out.push('<p>' + inline(line) + '</p>');
  }
  if (list) out.push('</ul>');
  return out.join('\\n');
}

const source = document.getElementById('source');
const preview = document.getElementById('preview');
function update() { preview.innerHTML = render(source.value); }
source.addEventListener('input', update);
update();
`,
  },
  broken: [{ why: 'bold is not rendered', file: 'markdown.js', from: "'<strong>$1</strong>'", to: "'**$1**'" }],
  async check(page, url) {
    await page.goto(url);
    await page.fill('#source', '# Title\n\nSome **bold** and *soft* words.\n\n## Items\n- one\n- two');
    const has = (selector: string, text: string) => eventually(async () => (await textOf(page, `#preview ${selector}`)) === text,
      async () => `the preview has no ${selector} "${text}" (its HTML: ${await page.locator('#preview').innerHTML()})`);
    await has('h1', 'Title');
    await has('h2', 'Items');
    await has('strong', 'bold');
    await has('em', 'soft');
    await eventually(async () => (await page.locator('#preview li').allTextContents()).map((t) => t.trim()).join('|') === 'one|two',
      async () => `the preview's list items are ${JSON.stringify(await page.locator('#preview li').allTextContents())}`);
  },
};
