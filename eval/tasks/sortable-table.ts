import { must, type EvalTask } from '../task.ts';

export const sortableTable: EvalTask = {
  id: 'sortable-table',
  title: 'Table sorted by a column',
  request: 'Make a table with id "people" of these people (name, age): Ann 34, Bob 9, Cleo 102, Dan 27. Clicking a header cell (th) sorts the rows by that column, ascending; ages sort as numbers.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>People</title>
<style>th { cursor: pointer; text-align: left; } td, th { padding: .25rem .75rem; }</style></head>
<body>
  <table id="people">
    <thead><tr><th data-key="name">Name</th><th data-key="age">Age</th></tr></thead>
    <tbody></tbody>
  </table>
  <script src="table.js"></script>
</body>
</html>
`,
    'table.js': `const people = [
  { name: 'Ann', age: 34 }, { name: 'Bob', age: 9 }, { name: 'Cleo', age: 102 }, { name: 'Dan', age: 27 },
];
const body = document.querySelector('#people tbody');

function render(rows) {
  body.innerHTML = '';
  for (const p of rows) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td></td><td></td>';
    tr.children[0].textContent = p.name;
    tr.children[1].textContent = String(p.age);
    body.appendChild(tr);
  }
}

document.querySelectorAll('#people th').forEach((th) => {
  th.addEventListener('click', () => {
    const key = th.dataset.key;
    const sorted = [...people].sort((a, b) => (key === 'age' ? a.age - b.age : a.name.localeCompare(b.name)));
    render(sorted);
  });
});
render(people);
`,
  },
  broken: [{ why: 'ages sort as text (102 before 27)', file: 'table.js', from: "key === 'age' ? a.age - b.age : a.name.localeCompare(b.name)", to: 'String(a[key]).localeCompare(String(b[key]))' }],
  async check(page, url) {
    await page.goto(url);
    const column = (n: number) => page.locator(`#people tbody tr td:nth-child(${n})`).allTextContents().then((t) => t.map((s) => s.trim()));
    const header = (label: RegExp) => page.locator('#people th').filter({ hasText: label }).first();
    await header(/age/i).click();
    const ages = (await column(2)).join(' ');
    must(ages === '9 27 34 102', `sorted by age the ages read "${ages}", not "9 27 34 102"`);
    await header(/name/i).click();
    const names = (await column(1)).join(' ');
    must(names === 'Ann Bob Cleo Dan', `sorted by name the names read "${names}"`);
  },
};
