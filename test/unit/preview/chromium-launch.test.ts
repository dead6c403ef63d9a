// Issue 27, item 12: how Chromium is launched for pages a model wrote. As root it goes through the
// unprivileged launcher with its sandbox on; otherwise straight, sandbox on; unsandboxed only when asked.
// (That the sandbox really comes up is e2e/eval-hostile.test.ts, in real Chromium.)
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { NO_SANDBOX_ENV, sandboxedLaunch } from '../../../src/preview/chromium.ts';

test('as root: the unprivileged launcher, sandbox on, the real Chromium passed to it', () => {
  const how = sandboxedLaunch({ CHROMIUM_PATH: '/opt/chromium' }, 0);
  expect(how).toMatchObject({ chromiumSandbox: true, env: { POOLED_CHROMIUM_REAL: '/opt/chromium' } });
  expect(how.executablePath).toMatch(/\/scripts\/chromium-unprivileged\.sh$/);
  expect(how.how).toMatch(/^sandboxed, as uid 65534 /);
});

test('as another user: Chromium itself, sandbox on', () => {
  expect(sandboxedLaunch({ CHROMIUM_PATH: '/opt/chromium' }, 1000)).toMatchObject({ executablePath: '/opt/chromium', chromiumSandbox: true, how: 'sandboxed' });
});

test(`unsandboxed only with ${NO_SANDBOX_ENV}=1, and it says so`, () => {
  expect(sandboxedLaunch({ CHROMIUM_PATH: '/opt/chromium', [NO_SANDBOX_ENV]: '1' }, 0))
    .toMatchObject({ executablePath: '/opt/chromium', chromiumSandbox: false, how: `without its sandbox (${NO_SANDBOX_ENV}=1)` });
  expect(sandboxedLaunch({ CHROMIUM_PATH: '/opt/chromium', [NO_SANDBOX_ENV]: 'yes' }, 0).chromiumSandbox).toBe(true);
});

test('the launcher refuses to run without the profile folder it must hand over (and runs nothing)', () => {
  const { executablePath } = sandboxedLaunch({}, 0);
  let err: { status?: number; stderr?: Buffer } = {};
  try {
    execFileSync(executablePath, ['--headless=new'], { env: { ...process.env, POOLED_CHROMIUM_REAL: '/bin/false' }, stdio: 'pipe' });
  } catch (e) {
    err = e as typeof err;
  }
  expect(err.status).toBe(2);
  expect(String(err.stderr)).toMatch(/no --user-data-dir=FOLDER among the arguments/);
});
