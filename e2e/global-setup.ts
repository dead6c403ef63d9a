// Build the app once for all e2e files; each test file then starts its own server on a free port.
import { build } from 'vite';

export default async function setup(): Promise<void> {
  await build({ logLevel: 'warn' });
}
