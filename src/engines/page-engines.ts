// The engine table as a browser page hands it to the room: on a page's main thread a row that runs in a
// worker (inWorker) probes and loads its shares in the one engine worker (./worker-share.ts), where the
// table's own copy of the row does the work on the worker's thread. Elsewhere (Node: tests, the CLI)
// and for rows on the page's thread, each row is asked as it is. Apart from ./table.ts because the
// worker imports the table, and the worker's code must not reach the worker again.
import { onPageMainThread, type EngineRow, type EngineTable } from './contract.ts';
import { ENGINES } from './table.ts';

/** `row`, its probe and loads sent to the engine worker when asked on a page's main thread. */
export function inEngineWorker(row: EngineRow): EngineRow {
  if (!row.inWorker) return row;
  return {
    ...row,
    probe: async (budgetMs, options) => (onPageMainThread() ? (await import('./worker-share.ts')).probeInWorker(row, budgetMs, options) : row.probe(budgetMs, options)),
    loadShare: (options) => (onPageMainThread() ? async (share) => (await import('./worker-share.ts')).loadInWorker(row, options, share) : row.loadShare(options)),
  };
}

/** The table src/app hands the room: every row of ENGINES, those that run in a worker sent there. */
export const PAGE_ENGINES: EngineTable = Object.fromEntries(Object.entries(ENGINES).map(([kind, row]) => [kind, inEngineWorker(row)]));
