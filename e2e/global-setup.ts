// Build the app once for all e2e files; each test file then starts its own server on a free port.
// The build runs in its own process with NODE_ENV=production: inside Vitest NODE_ENV is "test", which
// would make Vite resolve Lit's development build, so the e2e would test other code than `npm start` serves.
import { execFileSync } from 'node:child_process';

export default async function setup(): Promise<void> {
  execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], {
    stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' },
  });
}
