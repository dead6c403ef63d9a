// Headless Debian Chromium for Node: the flags every launch shares, and the launch for pages a model
// wrote (the agent's headless preview, the eval's checks), which runs with Chromium's sandbox ON.
// Chromium refuses to run as root with its sandbox on, so as root (a container's default) it is started
// through scripts/chromium-unprivileged.sh, which drops to an unprivileged user first; the namespace
// sandbox then needs unprivileged user namespaces. See docs/platform.md (Chromium's sandbox).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for every launch (docs/platform.md, WebGPU in Chromium); no sandbox flag either way. */
export const CHROMIUM_FLAGS = [
  '--headless=new', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-dev-shm-usage', '--enable-unsafe-webgpu',
  '--allow-loopback-in-peer-connection',
];

/** The one way to run model-written pages without the sandbox: this variable set to 1 (said in the log). */
export const NO_SANDBOX_ENV = 'POOLED_CHROMIUM_NO_SANDBOX';

const UNPRIVILEGED_LAUNCHER = fileURLToPath(new URL('../../scripts/chromium-unprivileged.sh', import.meta.url));

/** Chromium could not start with its sandbox on: the message says what the machine needs. */
export class ChromiumSandboxError extends Error {
  override name = 'ChromiumSandboxError';
}

export interface SandboxedLaunch {
  executablePath: string;
  chromiumSandbox: boolean;
  env: Record<string, string | undefined>;
  /** How the sandbox is arranged, in words (for logs and errors). */
  how: string;
}

/** How to launch for model-written pages on this machine: as root through the unprivileged launcher. */
export function sandboxedLaunch(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? -1): SandboxedLaunch {
  const chromium = env.CHROMIUM_PATH ?? CHROMIUM_PATH;
  if (env[NO_SANDBOX_ENV] === '1') {
    return { executablePath: chromium, chromiumSandbox: false, env: { ...env }, how: `without its sandbox (${NO_SANDBOX_ENV}=1)` };
  }
  if (uid === 0) {
    const user = env.POOLED_CHROMIUM_UID ?? '65534';
    return {
      executablePath: UNPRIVILEGED_LAUNCHER, chromiumSandbox: true, env: { ...env, POOLED_CHROMIUM_REAL: chromium },
      how: `sandboxed, as uid ${user} through scripts/chromium-unprivileged.sh (we run as root)`,
    };
  }
  return { executablePath: chromium, chromiumSandbox: true, env: { ...env }, how: 'sandboxed' };
}

/** Chromium for pages a model wrote: sandbox on, or a ChromiumSandboxError that says what to set up. */
export async function launchSandboxedChromium(): Promise<Browser> {
  const how = sandboxedLaunch();
  if (!existsSync(process.env.CHROMIUM_PATH ?? CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${process.env.CHROMIUM_PATH ?? CHROMIUM_PATH} (set CHROMIUM_PATH, or run \`npm run system-deps\`)`);
  }
  if (!how.chromiumSandbox) process.stderr.write(`warning: Chromium runs pages written by a model ${how.how}\n`);
  const { chromium } = await import('playwright-core');
  try {
    return await chromium.launch({
      executablePath: how.executablePath, chromiumSandbox: how.chromiumSandbox, env: how.env,
      args: CHROMIUM_FLAGS, headless: true,
    });
  } catch (e) {
    const first = (e as Error).message.split('\n').find((l) => /sandbox|setpriv|chown|not found|No such file/i.test(l)) ?? (e as Error).message.split('\n')[0];
    throw new ChromiumSandboxError(
      `could not start Chromium (${CHROMIUM_PATH}) ${how.how}: ${first}. Pages written by a model run only in Chromium's ` +
      'sandbox, which needs unprivileged user namespaces (user.max_user_namespaces > 0; on Ubuntu also ' +
      'kernel.apparmor_restrict_unprivileged_userns=0) and, as root, setpriv (util-linux). See docs/platform.md, ' +
      `Chromium's sandbox; to run them unsandboxed anyway, set ${NO_SANDBOX_ENV}=1.`,
    );
  }
}

/**
 * Keeps a context's pages on one origin (http://127.0.0.1:PORT): every request elsewhere (another
 * loopback service, which may answer `Access-Control-Allow-Origin: *`) is aborted before it is sent, and
 * every WebSocket elsewhere closed. Enforced by the driver (Playwright's request interception), so
 * nothing a page does can lift it; data: and blob: URLs never reach the network and stay allowed.
 */
export async function confineToOrigin(context: BrowserContext, origin: string): Promise<void> {
  const own = new URL(origin);
  await context.route((url) => url.origin !== own.origin, (route) => route.abort('blockedbyclient'));
  await context.routeWebSocket((url) => url.host !== own.host, (ws) => ws.close({ code: 1008, reason: 'blocked: another origin' }));
}
