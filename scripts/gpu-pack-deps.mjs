// scripts/gpu-pack.sh's step that lists the package folders node-llama-cpp needs at run time: the
// package, its dependencies and theirs (as npm resolved them in node_modules), and its Vulkan binaries.
// Prints one folder (relative to the repository) a line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const seen = new Set();
function visit(name, from) {
  // node's lookup: node_modules beside `from`, then up the tree
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) {
      if (seen.has(candidate)) return;
      seen.add(candidate);
      const pkg = JSON.parse(readFileSync(path.join(candidate, 'package.json'), 'utf8'));
      for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, candidate);
      return;
    }
    if (dir === path.dirname(dir) || dir === '.') throw new Error(`gpu-pack: ${name} (needed from ${from}) is not installed`);
  }
}
visit('node-llama-cpp', '.');
visit('@node-llama-cpp/linux-x64-vulkan', '.');
for (const d of [...seen].sort()) console.log(path.relative('.', d));
