// The eval suite's tasks, in the order they run: twelve apps built from an empty folder, then follow-ups
// that change one of those apps (given its files, the agent reads and edits them).
import type { EvalTask } from '../task.ts';
import { canvasGame } from './canvas-game.ts';
import { counter } from './counter.ts';
import { counterReset } from './counter-reset.ts';
import { darkMode } from './dark-mode.ts';
import { formValidation } from './form-validation.ts';
import { gallery } from './gallery.ts';
import { markdownPreview } from './markdown-preview.ts';
import { quiz } from './quiz.ts';
import { sortableTable } from './sortable-table.ts';
import { stopwatch } from './stopwatch.ts';
import { stopwatchLaps } from './stopwatch-laps.ts';
import { tabs } from './tabs.ts';
import { tipCalculator } from './tip-calculator.ts';
import { tipSplit } from './tip-split.ts';
import { todoList } from './todo-list.ts';
import { todoRemove } from './todo-remove.ts';

export const EVAL_TASKS: readonly EvalTask[] = [
  counter, todoList, tipCalculator, tabs, formValidation, canvasGame, sortableTable, darkMode, quiz, markdownPreview, stopwatch, gallery,
  counterReset, todoRemove, tipSplit, stopwatchLaps,
];

/** The follow-up tasks: those that start from given files and are answered with edits. */
export const FOLLOW_UP_TASKS: readonly EvalTask[] = EVAL_TASKS.filter((t) => t.given !== undefined);
