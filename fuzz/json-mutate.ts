// Structure-aware mutation of JSON values for the fuzz targets: pick one node of the tree at random and
// replace, delete, retype or duplicate it, with the values that break readers (null, NaN strings, huge
// and negative numbers, deep nesting, long strings, lookalike keys).
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const NASTY: Json[] = [
  null, true, false, 0, -1, 1.5, -0.5, 2 ** 31, 2 ** 53, 2 ** 64, 1e308, -1e308, '', 'x', 'NaN', '../../etc/passwd',
  '\u0000', '\n', 'a'.repeat(5000), [], {}, [null], { '': null }, [[[[[[[[[[[]]]]]]]]]]],
];

/** Every path to a node ([] = the root). */
function paths(v: Json, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) paths(v[k]!, [...at, k], out);
  return out;
}

function randomValue(rand: () => number, like: Json): Json {
  const roll = rand();
  if (roll < 0.5) return structuredClone(NASTY[Math.floor(rand() * NASTY.length)]!); // a copy: later edits must not change the constants
  if (typeof like === 'number') return [like + 1, like - 1, -like, like * 1024, Math.floor(like / 2), like + 0.5][Math.floor(rand() * 6)]!;
  if (typeof like === 'string') return like.slice(0, Math.floor(rand() * like.length)) + (rand() < 0.5 ? '' : '\u202e\ud800');
  if (Array.isArray(like)) return rand() < 0.5 ? like.slice(1) : [...like, ...like];
  return structuredClone(like);
}

/** A mutated copy of `value`: 1–3 random edits. */
export function mutateJson(value: Json, rand: () => number): Json {
  let root = structuredClone(value);
  const edits = 1 + Math.floor(rand() * 3);
  for (let e = 0; e < edits; e++) {
    const all = paths(root);
    const path = all[Math.floor(rand() * all.length)]!;
    if (path.length === 0) { root = randomValue(rand, root); continue; }
    let parent: Json = root;
    for (const k of path.slice(0, -1)) parent = (parent as Record<string | number, Json>)[k]!;
    const key = path.at(-1)!;
    const container = parent as Record<string | number, Json>;
    const roll = rand();
    if (roll < 0.25 && !Array.isArray(parent)) delete container[key];
    else if (roll < 0.3 && Array.isArray(parent)) parent.splice(Number(key), 1);
    else if (roll < 0.35 && !Array.isArray(parent)) container[`${String(key)}_`] = container[key]!;
    else container[key] = randomValue(rand, container[key]!);
  }
  return root;
}
