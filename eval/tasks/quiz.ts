import { eventually, textOf, type EvalTask } from '../task.ts';

export const quiz: EvalTask = {
  id: 'quiz',
  title: 'Quiz with a score',
  request: 'Make a three-question quiz. Q1 "2 + 2 = ?" with options 3, 4, 5 (4 is right); Q2 "Capital of France?" with options Paris, Rome (Paris is right); Q3 "Largest planet?" with options Mars, Jupiter (Jupiter is right). Use radio buttons named q1, q2, q3 whose values are the option texts, a button with id "submit", and show "Score: N/3" in an element with id "result".',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Quiz</title></head>
<body>
  <form id="quiz">
    <fieldset><legend>2 + 2 = ?</legend>
      <label><input type="radio" name="q1" value="3"> 3</label>
      <label><input type="radio" name="q1" value="4"> 4</label>
      <label><input type="radio" name="q1" value="5"> 5</label>
    </fieldset>
    <fieldset><legend>Capital of France?</legend>
      <label><input type="radio" name="q2" value="Paris"> Paris</label>
      <label><input type="radio" name="q2" value="Rome"> Rome</label>
    </fieldset>
    <fieldset><legend>Largest planet?</legend>
      <label><input type="radio" name="q3" value="Mars"> Mars</label>
      <label><input type="radio" name="q3" value="Jupiter"> Jupiter</label>
    </fieldset>
    <button type="button" id="submit">Check answers</button>
  </form>
  <p id="result"></p>
  <script src="quiz.js"></script>
</body>
</html>
`,
    'quiz.js': `const answers = { q1: '4', q2: 'Paris', q3: 'Jupiter' };
document.getElementById('submit').addEventListener('click', () => {
  let score = 0;
  for (const [name, right] of Object.entries(answers)) {
    const picked = document.querySelector('input[name="' + name + '"]:checked');
    if (picked && picked.value === right) score++;
  }
  document.getElementById('result').textContent = 'Score: ' + score + '/3';
});
`,
  },
  broken: [{ why: 'the second answer is keyed wrong', file: 'quiz.js', from: "q2: 'Paris'", to: "q2: 'Rome'" }],
  async check(page, url) {
    await page.goto(url);
    const answer = async (q1: string, q2: string, q3: string) => {
      for (const [name, value] of [['q1', q1], ['q2', q2], ['q3', q3]]) await page.check(`input[name="${name}"][value="${value}"]`);
      await page.click('#submit');
    };
    const score = async (want: string) => eventually(async () => (await textOf(page, '#result')).replace(/\s+/g, '').includes(want.replace(/\s+/g, '')),
      async () => `the result reads "${await textOf(page, '#result')}", not "${want}"`);
    await answer('4', 'Paris', 'Mars');
    await score('Score: 2/3');
    await answer('4', 'Paris', 'Jupiter');
    await score('Score: 3/3');
    await answer('3', 'Rome', 'Mars');
    await score('Score: 0/3');
  },
};
