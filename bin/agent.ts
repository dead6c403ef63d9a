// `npm run agent -- --project DIR --replay FILE.jsonl [--format xml|json] [--ctx N] [--json]`
// (see src/agent/cli.ts). Exits explicitly: worker threads and caches must not keep Node alive.
import { runAgentCli } from '../src/agent/cli.ts';

try {
  process.exit(await runAgentCli(process.argv.slice(2)));
} catch (e) {
  console.error(`${(e as Error).name}: ${(e as Error).message}`);
  process.exit(1);
}
