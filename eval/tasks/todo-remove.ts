// Follow-up on the todo-list task's page: remove items, and say how many are left.
import { eventually, must, textOf, type EvalTask } from '../task.ts';
import { todoList } from './todo-list.ts';

export const todoRemove: EvalTask = {
  id: 'todo-remove',
  title: 'Follow-up: remove todos and show how many are left',
  request: 'In the todo list, give each item a button with class "remove" that deletes it (it must stay deleted after a reload), and show how many items are left in an element with id "left", like "2 left".',
  given: todoList.solution,
  edits: [
    { file: 'index.html', oldText: '  <ul id="todos"></ul>\n', newText: '  <ul id="todos"></ul>\n  <p id="left"></p>\n' },
    { file: 'todos.js', oldText: '  for (const text of items) {\n', newText: '  items.forEach((text, i) => {\n' },
    {
      file: 'todos.js',
      oldText: '    list.appendChild(li);\n  }\n}\n',
      newText: `    const remove = document.createElement('button');
    remove.className = 'remove';
    remove.textContent = '×';
    remove.addEventListener('click', () => {
      items.splice(i, 1);
      localStorage.setItem(KEY, JSON.stringify(items));
      render();
    });
    li.append(' ', remove);
    list.appendChild(li);
  });
  document.getElementById('left').textContent = \`\${items.length} left\`;
}
`,
    },
  ],
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Todos</title></head>
<body>
  <h1>Todos</h1>
  <input id="new-todo" placeholder="What needs doing?">
  <button id="add">Add</button>
  <ul id="todos"></ul>
  <p id="left"></p>
  <script src="todos.js"></script>
</body>
</html>
`,
    'todos.js': `const KEY = 'todos';
const list = document.getElementById('todos');
const input = document.getElementById('new-todo');
let items = JSON.parse(localStorage.getItem(KEY) || '[]');

function render() {
  list.innerHTML = '';
  items.forEach((text, i) => {
    const li = document.createElement('li');
    li.textContent = text;
    const remove = document.createElement('button');
    remove.className = 'remove';
    remove.textContent = '×';
    remove.addEventListener('click', () => {
      items.splice(i, 1);
      localStorage.setItem(KEY, JSON.stringify(items));
      render();
    });
    li.append(' ', remove);
    list.appendChild(li);
  });
  document.getElementById('left').textContent = \`\${items.length} left\`;
}

function add() {
  const text = input.value.trim();
  if (!text) return;
  items.push(text);
  localStorage.setItem(KEY, JSON.stringify(items));
  input.value = '';
  render();
}

document.getElementById('add').addEventListener('click', add);
input.addEventListener('keydown', (e) => { if (e.key === 'Enter') add(); });
render();
`,
  },
  broken: [
    { why: 'a removed item comes back after a reload', file: 'todos.js', from: '      items.splice(i, 1);\n      localStorage.setItem(KEY, JSON.stringify(items));\n', to: '      items.splice(i, 1);\n' },
    { why: 'remove deletes the first item, not its own', file: 'todos.js', from: 'items.splice(i, 1);', to: 'items.splice(0, 1);' },
  ],
  async check(page, url) {
    await page.goto(url);
    // An item's text without its remove button's label.
    const items = () => page.locator('#todos li').evaluateAll((lis) => lis.map((li) => {
      const copy = li.cloneNode(true) as Element;
      copy.querySelectorAll('.remove').forEach((b) => b.remove());
      return (copy.textContent ?? '').trim();
    }));
    const left = () => textOf(page, '#left');
    const all = ['buy milk', 'walk the dog', 'write the report'];
    for (const item of all) {
      await page.fill('#new-todo', item);
      await page.click('#add');
    }
    await eventually(async () => (await items()).join('|') === all.join('|'), async () => `after adding three items the list has ${JSON.stringify(await items())}: adding broke`);
    await eventually(async () => /\b3 left\b/.test(await left()), async () => `with three items #left says "${await left()}", not "3 left"`);
    const removeButtons = await page.locator('#todos li .remove').count();
    must(removeButtons === 3, `the list's three items have ${removeButtons} buttons with class "remove" between them, not one each`);
    await page.locator('#todos li', { hasText: 'walk the dog' }).locator('.remove').click();
    const kept = 'buy milk|write the report';
    await eventually(async () => (await items()).join('|') === kept, async () => `after removing "walk the dog" the list has ${JSON.stringify(await items())}`);
    await eventually(async () => /\b2 left\b/.test(await left()), async () => `after removing one of three items #left says "${await left()}", not "2 left"`);
    await page.reload();
    await eventually(async () => (await items()).join('|') === kept, async () => `after a reload the list has ${JSON.stringify(await items())}, not the two items kept`);
    await eventually(async () => /\b2 left\b/.test(await left()), async () => `after a reload #left says "${await left()}", not "2 left"`);
  },
};
