import { must, type EvalTask } from '../task.ts';

export const darkMode: EvalTask = {
  id: 'dark-mode',
  title: 'Dark-mode toggle kept in localStorage',
  request: 'Make a page with some text and a button with id "theme-toggle" that switches dark mode on and off by toggling the class "dark" on <body> (dark background, light text). Remember the choice in localStorage so a reload keeps it.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Theme</title>
<style>
  body { background: #fff; color: #111; font-family: sans-serif; }
  body.dark { background: #121212; color: #eee; }
</style></head>
<body>
  <button id="theme-toggle">Toggle dark mode</button>
  <p>Some text to read in either mode.</p>
  <script src="theme.js"></script>
</body>
</html>
`,
    'theme.js': `const KEY = 'theme';
if (localStorage.getItem(KEY) === 'dark') document.body.classList.add('dark');
document.getElementById('theme-toggle').addEventListener('click', () => {
  const dark = document.body.classList.toggle('dark');
  localStorage.setItem(KEY, dark ? 'dark' : 'light');
});
`,
  },
  broken: [{ why: 'the choice is not restored after a reload', file: 'theme.js', from: "if (localStorage.getItem(KEY) === 'dark') document.body.classList.add('dark');\n", to: '' }],
  async check(page, url) {
    await page.goto(url);
    const dark = () => page.evaluate('document.body.classList.contains("dark")') as Promise<boolean>;
    must(!(await dark()), 'the page starts in dark mode');
    await page.click('#theme-toggle');
    must(await dark(), 'clicking #theme-toggle did not put class "dark" on <body>');
    const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor') as string;
    must(bg !== 'rgb(255, 255, 255)' && bg !== 'rgba(0, 0, 0, 0)', `in dark mode the background is still ${bg}`);
    await page.reload();
    must(await dark(), 'after a reload the page is no longer dark');
    await page.click('#theme-toggle');
    await page.reload();
    must(!(await dark()), 'switched back to light, a reload brings dark mode back');
  },
};
