import { eventually, type EvalTask } from '../task.ts';

export const todoList: EvalTask = {
  id: 'todo-list',
  title: 'Todo list kept in localStorage',
  request: 'Make a todo list: a text input with id "new-todo" and a button with id "add" that adds the typed text as an <li> in a list with id "todos" (Enter in the input adds too). Keep the items in localStorage so they are still there after a reload.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Todos</title></head>
<body>
  <h1>Todos</h1>
  <input id="new-todo" placeholder="What needs doing?">
  <button id="add">Add</button>
  <ul id="todos"></ul>
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
  for (const text of items) {
    const li = document.createElement('li');
    li.textContent = text;
    list.appendChild(li);
  }
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
  broken: [{ why: 'the items are not saved', file: 'todos.js', from: "  localStorage.setItem(KEY, JSON.stringify(items));\n", to: '' }],
  async check(page, url) {
    await page.goto(url);
    for (const item of ['buy milk', 'walk the dog', 'write the report']) {
      await page.fill('#new-todo', item);
      await page.click('#add');
    }
    const items = () => page.locator('#todos li').allTextContents().then((t) => t.map((s) => s.trim()));
    await eventually(async () => (await items()).length === 3, async () => `after adding three items the list has ${JSON.stringify(await items())}`);
    await page.reload();
    await eventually(async () => (await items()).join('|') === 'buy milk|walk the dog|write the report',
      async () => `after a reload the list has ${JSON.stringify(await items())}, not the three items`);
  },
};
