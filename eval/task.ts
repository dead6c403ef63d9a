// One eval task: a request to the agent, a check of the page it built (Playwright in real Chromium),
// a scripted right answer (the files a correct agent would write) and broken answers that each check
// must fail. The replay backend turns a set of files into the script of a model writing them.
// A follow-up task also gives the project as it was before the request (`given`) and the right answer
// as the edits a careful agent makes to it (`edits`, see edits.ts); its `solution` is still the files
// after the right answer, so broken variants and checks work the same way for both kinds.
import type { Page } from 'playwright-core';

export interface BrokenSolution {
  /** What is wrong, in a few words ("the minus button adds"). */
  why: string;
  /** One textual change to the right answer: in `file`, `from` (which must occur) becomes `to`. */
  file: string;
  from: string;
  to: string;
}

/** One edit_file of a follow-up's right answer: in `file`, `oldText` (found exactly once) becomes `newText`. */
export interface FileEdit {
  file: string;
  oldText: string;
  newText: string;
}

export interface EvalTask {
  id: string;                  // "todo-list"
  title: string;               // "Todo list kept in localStorage"
  /** What the user asks, naming the ids and behaviour the check relies on. */
  request: string;
  /** The right answer: project-relative path -> content, written in this order. */
  solution: Record<string, string>;
  /** Follow-up tasks: the project's files before the request, written into the run's folder first. */
  given?: Record<string, string>;
  /** Follow-up tasks: the right answer as edits of `given`, in order; applied, they give exactly `solution`. */
  edits?: readonly FileEdit[];
  broken: BrokenSolution[];
  /** Throws CheckFailed (or any error) when the page does not do what was asked. `url` opens index.html. */
  check(page: Page, url: string): Promise<void>;
}

/** A check's verdict: the message says what the page did instead. */
export class CheckFailed extends Error {
  override name = 'CheckFailed';
}

export function must(condition: boolean, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

/** The trimmed text of the first element matching `selector` ('' when there is none). */
export async function textOf(page: Page, selector: string): Promise<string> {
  const el = page.locator(selector).first();
  return (await el.count()) === 0 ? '' : ((await el.textContent({ timeout: 2_000 })) ?? '').trim();
}

/** Waits up to `ms` for `probe` to return true (pages update asynchronously). */
export async function eventually(probe: () => Promise<boolean>, message: () => Promise<string> | string, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > end) throw new CheckFailed(await message());
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The broken variant's files: the solution with its one change applied (the change must apply). */
export function brokenFiles(task: EvalTask, broken: BrokenSolution): Record<string, string> {
  const content = task.solution[broken.file];
  if (content === undefined || !content.includes(broken.from)) {
    throw new Error(`eval task ${task.id}: broken solution "${broken.why}" changes text not in ${broken.file}`);
  }
  return { ...task.solution, [broken.file]: content.replace(broken.from, broken.to) };
}
