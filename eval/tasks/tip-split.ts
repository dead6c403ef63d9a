// Follow-up on the tip-calculator task's page: split the total between people.
import { eventually, must, textOf, type EvalTask } from '../task.ts';
import { tipCalculator } from './tip-calculator.ts';

export const tipSplit: EvalTask = {
  id: 'tip-split',
  title: 'Follow-up: split the bill between people',
  request: 'Add a number input with id "people" (default 1) to the tip calculator and show the total per person in an element with id "per-person", with two decimals like the others.',
  given: tipCalculator.solution,
  edits: [
    {
      file: 'index.html',
      oldText: '  <p>Total: <span id="total">0.00</span></p>\n',
      newText: '  <p>Total: <span id="total">0.00</span></p>\n' +
        '  <label>People <input id="people" type="number" min="1" step="1" value="1"></label>\n' +
        '  <p>Per person: <span id="per-person">0.00</span></p>\n',
    },
    {
      file: 'tip.js',
      oldText: "const tip = document.getElementById('tip');\n",
      newText: "const tip = document.getElementById('tip');\nconst people = document.getElementById('people');\n",
    },
    {
      file: 'tip.js',
      oldText: "  document.getElementById('total').textContent = (amount + tipAmount).toFixed(2);\n}\n",
      newText: "  document.getElementById('total').textContent = (amount + tipAmount).toFixed(2);\n" +
        '  const count = Math.max(1, Math.floor(Number(people.value)) || 1);\n' +
        "  document.getElementById('per-person').textContent = ((amount + tipAmount) / count).toFixed(2);\n}\n",
    },
    {
      file: 'tip.js',
      oldText: "tip.addEventListener('input', update);\n",
      newText: "tip.addEventListener('input', update);\npeople.addEventListener('input', update);\n",
    },
  ],
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Tip calculator</title></head>
<body>
  <h1>Tip calculator</h1>
  <label>Bill <input id="bill" type="number" min="0" step="0.01"></label>
  <label>Tip % <input id="tip" type="number" min="0" value="15"></label>
  <p>Tip: <span id="tip-amount">0.00</span></p>
  <p>Total: <span id="total">0.00</span></p>
  <label>People <input id="people" type="number" min="1" step="1" value="1"></label>
  <p>Per person: <span id="per-person">0.00</span></p>
  <script src="tip.js"></script>
</body>
</html>
`,
    'tip.js': `const bill = document.getElementById('bill');
const tip = document.getElementById('tip');
const people = document.getElementById('people');

function update() {
  const amount = Number(bill.value) || 0;
  const percent = Number(tip.value) || 0;
  const tipAmount = amount * percent / 100;
  document.getElementById('tip-amount').textContent = tipAmount.toFixed(2);
  document.getElementById('total').textContent = (amount + tipAmount).toFixed(2);
  const count = Math.max(1, Math.floor(Number(people.value)) || 1);
  document.getElementById('per-person').textContent = ((amount + tipAmount) / count).toFixed(2);
}

bill.addEventListener('input', update);
tip.addEventListener('input', update);
people.addEventListener('input', update);
update();
`,
  },
  broken: [
    { why: 'the share per person leaves the tip out', file: 'tip.js', from: '((amount + tipAmount) / count)', to: '(amount / count)' },
    { why: 'changing the number of people updates nothing', file: 'tip.js', from: "people.addEventListener('input', update);\n", to: '' },
  ],
  async check(page, url) {
    await page.goto(url);
    const people = await page.locator('#people').inputValue().catch(() => null);
    must(people === '1', people === null ? 'there is no input with id "people"' : `#people starts at "${people}", not 1`);
    const shown = async () => `tip "${await textOf(page, '#tip-amount')}", total "${await textOf(page, '#total')}", per person "${await textOf(page, '#per-person')}"`;
    // Bill and tip first, people last: a change of people alone must update the share.
    const cases = [[80, 15, 1, '92.00', '92.00'], [80, 15, 4, '92.00', '23.00'], [50, 20, 3, '60.00', '20.00']] as const;
    for (const [billValue, percent, count, totalWanted, shareWanted] of cases) {
      await page.fill('#bill', String(billValue));
      await page.fill('#tip', String(percent));
      await page.fill('#people', String(count));
      await eventually(async () => (await textOf(page, '#total')).includes(totalWanted) && (await textOf(page, '#per-person')).includes(shareWanted),
        async () => `bill ${billValue} with ${percent}% for ${count} ${count === 1 ? 'person' : 'people'} shows ${await shown()}, not total ${totalWanted} and ${shareWanted} per person`);
    }
  },
};
