// The eval suite's tasks, in the order they run.
import type { EvalTask } from '../task.ts';
import { canvasGame } from './canvas-game.ts';
import { counter } from './counter.ts';
import { darkMode } from './dark-mode.ts';
import { formValidation } from './form-validation.ts';
import { gallery } from './gallery.ts';
import { markdownPreview } from './markdown-preview.ts';
import { quiz } from './quiz.ts';
import { sortableTable } from './sortable-table.ts';
import { stopwatch } from './stopwatch.ts';
import { tabs } from './tabs.ts';
import { tipCalculator } from './tip-calculator.ts';
import { todoList } from './todo-list.ts';

export const EVAL_TASKS: readonly EvalTask[] = [
  counter, todoList, tipCalculator, tabs, formValidation, canvasGame, sortableTable, darkMode, quiz, markdownPreview, stopwatch, gallery,
];
