import { eventually, must, textOf, type EvalTask } from '../task.ts';

export const formValidation: EvalTask = {
  id: 'form-validation',
  title: 'Sign-up form validation',
  request: 'Make a sign-up form with id "signup": inputs with ids "email" and "password" and a submit button. On submit, check that the email looks like name@host.tld and the password has at least 8 characters; show what is wrong in an element with id "error", or, when both are fine, show "Welcome!" in an element with id "success". The page must not reload.',
  solution: {
    'index.html': `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Sign up</title>
<style>#error { color: #b00; } #success { color: #070; }</style></head>
<body>
  <form id="signup" novalidate>
    <label>Email <input id="email" type="email"></label>
    <label>Password <input id="password" type="password"></label>
    <button type="submit">Sign up</button>
  </form>
  <p id="error"></p>
  <p id="success"></p>
  <script src="form.js"></script>
</body>
</html>
`,
    'form.js': `const form = document.getElementById('signup');
const error = document.getElementById('error');
const success = document.getElementById('success');

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const email = document.getElementById('email').value.trim();
  const password = document.getElementById('password').value;
  const problems = [];
  if (!/^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/.test(email)) problems.push('Enter a valid email address.');
  if (password.length < 8) problems.push('The password needs at least 8 characters.');
  error.textContent = problems.join(' ');
  success.textContent = problems.length === 0 ? 'Welcome!' : '';
});
`,
  },
  broken: [{ why: 'a short password is accepted', file: 'form.js', from: 'password.length < 8', to: 'password.length < 1' }],
  async check(page, url) {
    await page.goto(url);
    const attempt = async (email: string, password: string) => {
      await page.fill('#email', email);
      await page.fill('#password', password);
      await page.locator('#signup button[type="submit"], #signup input[type="submit"]').first().click();
    };
    await attempt('not-an-email', 'longenough1');
    await eventually(async () => (await textOf(page, '#error')) !== '' && !(await textOf(page, '#success')).includes('Welcome'),
      async () => `a bad email gave error "${await textOf(page, '#error')}" and success "${await textOf(page, '#success')}"`);
    await attempt('ann@example.com', 'short');
    await eventually(async () => (await textOf(page, '#error')) !== '' && !(await textOf(page, '#success')).includes('Welcome'),
      async () => `a 5-character password gave error "${await textOf(page, '#error')}" and success "${await textOf(page, '#success')}"`);
    await attempt('ann@example.com', 'longenough1');
    await eventually(async () => (await textOf(page, '#success')).includes('Welcome!'),
      async () => `a good email and password gave success "${await textOf(page, '#success')}" (error "${await textOf(page, '#error')}")`);
    must(page.url().split('#')[0] === url, `the page navigated to ${page.url()}`);
  },
};
