// The GPU bench as a program: `npm run bench -- --gpu [options]` (bin/bench.ts hands its arguments over)
// and the entry of the lent-GPU pack (scripts/gpu-pack.sh bundles this file). Options: ./run.ts.
import { parseGpuBenchArgs, runGpuBench } from './run.ts';

try {
  await runGpuBench(parseGpuBenchArgs(process.argv.slice(2)));
  process.exit(0);   // Dawn keeps Node alive otherwise
} catch (e) {
  console.error(e);
  process.exit(1);
}
