// The eval suite's follow-up tasks: each starts from another task's right answer, its edits are small
// (each oldText found exactly once at its point) and turn the given files into exactly its solution; the
// scripted answer (repliesEditing), run through the real agent loop on the given files in both call
// formats, reads each changed file once before editing it, edits, serves and leaves exactly the solution,
// or a broken variant's files. A task whose edits do not hold is refused with EditsMismatch.
import { describe, expect, test } from 'vitest';
import { EVAL_TASKS, FOLLOW_UP_TASKS } from '../../../eval/tasks/index.ts';
import { EditsMismatch, applyEdits, brokenEdits, followUpEdits } from '../../../eval/edits.ts';
import { repliesEditing, repliesWriting, scriptedReplies } from '../../../eval/script.ts';
import { brokenFiles, type BrokenSolution, type EvalTask } from '../../../eval/task.ts';
import type { ToolFormat } from '../../../src/model/tool-format.ts';
import { harness } from '../agent/harness.ts';

const lines = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Runs a script on `given` through the agent loop; the calls made, the end reason and the files left. */
async function runScript(given: Record<string, string>, replies: string[], format: ToolFormat) {
  const h = await harness({ replies, project: given, format, serve: [[]] });
  const outcome = await h.agent.run('follow-up');
  const calls = h.events.flatMap((e) => (e.type === 'call' ? [{ name: e.name, path: typeof e.arguments.path === 'string' ? e.arguments.path : '' }] : []));
  const failed = h.events.flatMap((e) => (e.type === 'result' && !e.ok ? [`${e.name}: ${e.text}`] : []));
  const files: Record<string, string> = {};
  for (const p of await h.files.allFiles()) files[p] = (await h.files.readText(p))!;
  return { outcome, calls, failed, files };
}

test('four follow-up tasks after the twelve built from nothing, each starting from one of their right answers', () => {
  expect(FOLLOW_UP_TASKS.map((t) => t.id)).toEqual(['counter-reset', 'todo-remove', 'tip-split', 'stopwatch-laps']);
  const fromScratch = EVAL_TASKS.filter((t) => t.given === undefined);
  expect(fromScratch.length).toBe(12);
  expect(EVAL_TASKS.slice(0, 12)).toEqual(fromScratch);
  for (const task of FOLLOW_UP_TASKS) {
    expect(fromScratch.some((t) => t.solution === task.given), task.id).toBe(true);
    expect(task.broken.length, task.id).toBeGreaterThanOrEqual(1);
  }
  expect(new Set(EVAL_TASKS.map((t) => t.id)).size).toBe(EVAL_TASKS.length);
});

describe.each(FOLLOW_UP_TASKS.map((t) => [t.id, t] as const))('%s', (_id, task) => {
  test('its edits apply in order (each oldText once, a few lines) and give exactly its solution', () => {
    const { given, edits } = followUpEdits(task);
    let files = { ...given };
    for (const edit of edits) {
      expect(lines(edit.oldText), JSON.stringify(edit.oldText)).toBeLessThanOrEqual(3);
      expect(files[edit.file]!.split(edit.oldText).length - 1, JSON.stringify(edit.oldText)).toBe(1);
      files = applyEdits(files, [edit], task.id);
    }
    expect(files).toEqual(task.solution);
    expect(Object.keys(task.solution).sort()).toEqual(Object.keys(given).sort());
    for (const file of Object.keys(given)) expect(task.solution[file] === given[file], `${file} is left as it was`).toBe(!edits.some((e) => e.file === file));
  });

  // A whole agent run on the replay model: the real vocabulary and call grammar load first (~10 s alone,
  // over 30 s on a loaded 2-core CI box).
  test.each(['json', 'xml'] as const)('its scripted answer (%s calls) reads, edits and serves to exactly the solution', { timeout: 120_000 }, async (format) => {
    const { calls, failed, outcome, files } = await runScript(task.given!, repliesEditing(task, format), format);
    expect(failed).toEqual([]);
    expect(outcome.reason).toBe('done');
    expect(files).toEqual(task.solution);
    // One edit_file per edit, in the task's order; each changed file read once, just before its first edit.
    const read = new Set<string>();
    const wanted = task.edits!.flatMap((e) => {
      const first = !read.has(e.file);
      read.add(e.file);
      return [...(first ? [{ name: 'read_file', path: e.file }] : []), { name: 'edit_file', path: e.file }];
    });
    expect(calls).toEqual([...wanted, { name: 'serve', path: '' }]);
    expect(scriptedReplies({ task, files: task.solution }, format)).toEqual(repliesEditing(task, format));
  });

  test.each(task.broken.map((b) => [b.why, b] as const))('broken "%s": the edits that write it leave exactly its files', { timeout: 120_000 }, async (_why, broken) => {
    const edits = brokenEdits(task, broken);
    expect(edits, 'the broken change lies inside an edit').not.toBeNull();
    expect(applyEdits(task.given!, edits!, task.id)).toEqual(brokenFiles(task, broken));
    const { calls, failed, outcome, files } = await runScript(task.given!, repliesEditing(task, 'json', broken), 'json');
    expect(failed).toEqual([]);
    expect(outcome.reason).toBe('done');
    expect(files).toEqual(brokenFiles(task, broken));
    expect(files).not.toEqual(task.solution);
    expect(calls.map((c) => c.name)).not.toContain('write_file');
  });
});

// A small follow-up of our own, to show the builder's refusals and its fallback.
const base: EvalTask = {
  id: 'made-up', title: 'made up', request: 'change it',
  given: { 'a.js': 'const a = 1;\nconst b = 2;\nconst c = 3;\n', 'b.js': 'x();\n' },
  edits: [{ file: 'a.js', oldText: 'const b = 2;\n', newText: 'const b = 20;\n' }],
  solution: { 'a.js': 'const a = 1;\nconst b = 20;\nconst c = 3;\n', 'b.js': 'x();\n' },
  broken: [],
  check: async () => {},
};

describe('the script builder', () => {
  test('refuses, with EditsMismatch, edits whose oldText is missing or not unique, or that do not give the solution', () => {
    const cases: Partial<EvalTask>[] = [
      { edits: [{ file: 'a.js', oldText: 'const d = 4;\n', newText: '' }] },
      { edits: [{ file: 'a.js', oldText: 'const ', newText: 'let ' }] },
      { edits: [{ file: 'a.js', oldText: '', newText: 'x' }] },
      { edits: [{ file: 'c.js', oldText: 'x', newText: 'y' }] },
      { edits: [{ file: 'a.js', oldText: 'const b = 2;\n', newText: 'const b = 21;\n' }] },
      { solution: { 'a.js': base.solution['a.js']! } },
      { edits: [] },
      { given: undefined },
      { edits: undefined },
    ];
    for (const change of cases) {
      const task = { ...base, ...change };
      expect(() => repliesEditing(task, 'json'), JSON.stringify(change)).toThrow(EditsMismatch);
    }
    expect(() => repliesEditing(base, 'json')).not.toThrow();
  });

  test('a broken change outside every edit is scripted as the broken file read and written whole', { timeout: 120_000 }, async () => {
    const broken: BrokenSolution = { why: 'c is wrong', file: 'a.js', from: 'const c = 3;', to: 'const c = 4;' };
    expect(brokenEdits(base, broken)).toBeNull();
    const elsewhere: BrokenSolution = { why: 'x is gone', file: 'b.js', from: 'x();\n', to: '' };
    for (const b of [broken, elsewhere]) {
      const { calls, failed, outcome, files } = await runScript(base.given!, repliesEditing(base, 'json', b), 'json');
      expect(failed).toEqual([]);
      expect(outcome.reason).toBe('done');
      expect(files).toEqual(brokenFiles(base, b));
      expect(calls.filter((c) => c.path === b.file).map((c) => c.name)).toEqual(['read_file', 'write_file']);
    }
  });

  test('a task built from nothing is still scripted as files written', () => {
    const counter = EVAL_TASKS.find((t) => t.id === 'counter')!;
    expect(scriptedReplies({ task: counter, files: counter.solution }, 'json')).toEqual(repliesWriting(counter.solution, 'json'));
  });
});
