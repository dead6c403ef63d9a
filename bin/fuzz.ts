// `npm run fuzz -- --seed 1 --count 100000 [--only room|room-hybrid|session|loader|gguf]`: the room frame
// fuzz (on a dense and on a hybrid model), the session fuzz, the loader fuzz and the GGUF fuzz (fuzz/*.fuzz.ts),
// `count` cases each from `seed`. Prints one line per target and every crash and hang; exits 1 if there
// was any. The same seed gives the same cases.
import { parseArgs } from 'node:util';
import { run as room } from '../fuzz/room.fuzz.ts';
import { run as session } from '../fuzz/session.fuzz.ts';
import { run as loader } from '../fuzz/loader.fuzz.ts';
import { run as gguf } from '../fuzz/gguf.fuzz.ts';
import { summary, type FuzzReport } from '../fuzz/report.ts';

const { values } = parseArgs({ options: { seed: { type: 'string', default: '1' }, count: { type: 'string', default: '10000' }, only: { type: 'string' } } });
const seed = Number(values.seed);
const count = Number(values.count);
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(count) || count < 1) {
  console.error('usage: npm run fuzz -- --seed <integer> --count <cases ≥ 1> [--only room|room-hybrid|session|loader|gguf]');
  process.exit(2);
}
const targets: [string, (seed: number, count: number) => Promise<FuzzReport>][] = [
  ['room', room], ['room-hybrid', (s, c) => room(s, c, { hybrid: true })], ['session', session], ['loader', loader], ['gguf', gguf],
];
let bad = 0;
for (const [name, target] of targets) {
  if (values.only && values.only !== name) continue;
  const report = await target(seed, count);
  console.log(summary(report));
  if ('peakRssMb' in report) {
    const g = report as Awaited<ReturnType<typeof gguf>>;
    console.log(`  slowest case ${g.slowestMs.toFixed(0)} ms, peak RSS ${g.peakRssMb.toFixed(0)} MiB, most heap held after a case ${g.maxHeldMb.toFixed(1)} MiB (measured when over the bound's cheap check)`);
  }
  for (const c of report.crashes) console.log(`  crash at case ${c.case}: ${c.error}`);
  for (const h of report.hangs) console.log(`  hang at case ${h.case}: ${h.what}`);
  bad += report.crashes.length + report.hangs.length;
}
process.exit(bad > 0 ? 1 : 0);
