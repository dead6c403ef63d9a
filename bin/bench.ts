// `npm run bench`: runs every bench/*.bench.ts in one process (same adapter, same load), prints the
// figures (ratios are what matter on a shared, noisy machine) and writes bench-results/bench.json.
// Each bench file exports `run(): Promise<Record<string, number | string>>` and a `title`.
// `npm run bench -- --peers` runs bench/peers/run.ts instead: our engine beside llama.cpp (LLAMA_BENCH).
// `npm run bench -- --room` runs bench/room-speed/run.ts (modelled devices over delayed links, the agent
// corpus) and writes bench-results/room.json: its figures at the top level.
// `npm run bench -- --cpu` runs bench/cpu/run.ts (the WASM engine beside the reference and WebGPU on the
// software adapter) and writes bench-results/cpu.json; `--cpu --peers` adds native llama.cpp and wllama (docs/peer-benchmarks.md).
// `npm run bench -- --gpu` runs bench/gpu/cli.ts (ours beside llama.cpp's Vulkan backend on full-size
// synthetic GGUFs; its own options, docs/peer-benchmarks.md) and writes bench-results/gpu.json.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

if (process.argv.includes('--gpu')) {
  await import('../bench/gpu/cli.ts');   // parses the arguments itself and exits
}
const { values } = parseArgs({ options: { only: { type: 'string' }, out: { type: 'string' }, peers: { type: 'boolean' }, room: { type: 'boolean' }, cpu: { type: 'boolean' } } });
const dir = path.resolve('bench');
const files = values.cpu ? ['cpu/run.ts'] : values.room ? ['room-speed/run.ts'] : values.peers
  ? ['peers/run.ts']
  : readdirSync(dir).filter((f) => f.endsWith('.bench.ts') && (!values.only || f.includes(values.only))).sort();
const results: Record<string, Record<string, number | string>> = {};
for (const file of files) {
  const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as {
    title?: string; run: () => Promise<Record<string, number | string>>;
  };
  const name = file.replace(/\.bench\.ts$/, '').replace(/\/run\.ts$/, '');
  console.log(`\n## ${mod.title ?? name}`);
  try {
    const figures = await mod.run();
    results[name] = figures;
    for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(48)} ${typeof v === 'number' ? +v.toPrecision(4) : v}`);
  } catch (e) {
    results[name] = { error: String((e as Error).stack ?? e) };
    console.log(`  failed: ${(e as Error).message}`);
  }
}
const out = values.out ?? path.resolve('bench-results', values.cpu ? 'cpu-run.json' : values.room ? 'room.json' : 'bench.json');
mkdirSync(path.dirname(out), { recursive: true });
const report = values.room ? { date: new Date().toISOString(), ...results['room-speed'] } : { date: new Date().toISOString(), results };
writeFileSync(out, JSON.stringify(report, null, 2));
console.log(`\nwrote ${out}`);
process.exit(0); // Dawn keeps Node alive otherwise
