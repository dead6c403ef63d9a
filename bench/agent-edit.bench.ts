// edit_file on a big file (issue 12, item 20): a miss shows the closest lines, found by a linear sliding
// bigram count. Times on a 60,000-line file of ordinary code with an 8-line old text that is not in it,
// and the whole edit_file call (exact, normalized and indentation-free searches first, then closest lines).
import { closestLines } from '../src/agent/tools/edit-match.ts';
import { MemoryFiles } from '../src/agent/files/memory.ts';
import { createFileTools } from '../src/agent/tools/file-tools.ts';

export const title = 'Agent: edit_file miss on a 60,000-line file (closest lines)';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<Record<string, number | string>> {
  const file = Array.from({ length: 60_000 }, (_, i) => `    const value${i} = compute(items[${i}], options.scale * ${i % 17}); // step ${i}`).join('\n');
  const old = Array.from({ length: 8 }, (_, j) => `  let other${j} = render(list[${j}], config.zoom + ${j});`).join('\n');
  const closest: number[] = [];
  for (let k = 0; k < 7; k++) { const t0 = performance.now(); closestLines(file, old); closest.push(performance.now() - t0); }
  const files = new MemoryFiles({ 'big.js': file });
  const edit = createFileTools(files).find((t) => t.schema.name === 'edit_file')!;
  const whole: number[] = [];
  for (let k = 0; k < 5; k++) { const t0 = performance.now(); await edit.run({ path: 'big.js', old, new: 'x' }, {}); whole.push(performance.now() - t0); }
  return {
    'file lines': 60_000,
    'closestLines ms (median of 7)': median(closest),
    'edit_file miss ms (median of 5)': median(whole),
  };
}
