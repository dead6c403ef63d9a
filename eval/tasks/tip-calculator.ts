import { eventually, textOf, type EvalTask } from '../task.ts';

export const tipCalculator: EvalTask = {
  id: 'tip-calculator',
  title: 'Tip calculator',
  request: 'Make a tip calculator: number inputs with ids "bill" and "tip" (tip in percent). As you type, show the tip in an element with id "tip-amount" and the bill plus tip in one with id "total", both with two decimals (like 12.50).',
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
  <script src="tip.js"></script>
</body>
</html>
`,
    'tip.js': `const bill = document.getElementById('bill');
const tip = document.getElementById('tip');

function update() {
  const amount = Number(bill.value) || 0;
  const percent = Number(tip.value) || 0;
  const tipAmount = amount * percent / 100;
  document.getElementById('tip-amount').textContent = tipAmount.toFixed(2);
  document.getElementById('total').textContent = (amount + tipAmount).toFixed(2);
}

bill.addEventListener('input', update);
tip.addEventListener('input', update);
update();
`,
  },
  broken: [{ why: 'the total leaves the tip out', file: 'tip.js', from: '(amount + tipAmount).toFixed(2)', to: 'amount.toFixed(2)' }],
  async check(page, url) {
    await page.goto(url);
    const cases = [[80, 15, '12.00', '92.00'], [50, 20, '10.00', '60.00']] as const;
    for (const [billValue, percent, tipWanted, totalWanted] of cases) {
      await page.fill('#bill', String(billValue));
      await page.fill('#tip', String(percent));
      await eventually(async () => (await textOf(page, '#tip-amount')).includes(tipWanted) && (await textOf(page, '#total')).includes(totalWanted),
        async () => `bill ${billValue} with ${percent}% shows tip "${await textOf(page, '#tip-amount')}" and total "${await textOf(page, '#total')}", not ${tipWanted} and ${totalWanted}`);
    }
  },
};
