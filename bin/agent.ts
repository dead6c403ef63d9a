// `npm run agent -- --project DIR --replay FILE.jsonl [--format xml|json] [--ctx N] [--json]`, Ctrl-C to stop
// (see src/agent/cli.ts). Exits explicitly: worker threads and caches must not keep Node alive.
import { runAgentCli } from '../src/agent/cli.ts';

// The first Ctrl-C is Stop (the request ends as the app's Stop ends it: the partial answer kept, the
// summary printed, exit 0); a second one quits at once (130, as a shell expects).
const stop = new AbortController();
process.on('SIGINT', () => {
  if (stop.signal.aborted) process.exit(130);
  console.error('· stopping (Ctrl-C again to quit at once)');
  stop.abort();
});

try {
  process.exit(await runAgentCli(process.argv.slice(2), { out: (line) => console.log(line), signal: stop.signal }));
} catch (e) {
  console.error(`${(e as Error).name}: ${(e as Error).message}`);
  process.exit(1);
}
