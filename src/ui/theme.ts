// Shared look: colours with readable contrast on the dark background (≥ 4.5:1 for text), buttons,
// inputs, cards, badges, bars, and a visible focus ring. Elements add `theme` to their styles.
import { css } from 'lit';

export const theme = css`
  :host {
    --bg: #0f1419; --panel: #151d25; --panel-2: #1b2530; --line: #2a3947; --text: #e8eef4; --muted: #a9bccd;
    --accent: #4aa3ff; --accent-2: #66d9a8; --warn: #ffd180; --bad: #ff8a80; --focus: #8cc8ff;
    color: var(--text); font: 14px/1.5 system-ui, -apple-system, 'Segoe UI', sans-serif;
  }
  *, *::before, *::after { box-sizing: border-box; }
  h1, h2, h3 { margin: 0; line-height: 1.25; }
  h2 { font-size: 1.05rem; }
  h3 { font-size: .95rem; }
  p { margin: .35rem 0; }
  .muted { color: var(--muted); }
  .card { border: 1px solid var(--line); border-radius: 10px; padding: .9rem 1rem; background: var(--panel); }
  button, .button {
    font: inherit; color: var(--text); background: #22303c; border: 1px solid #3a4b5b; border-radius: 7px;
    padding: .35rem .8rem; cursor: pointer; text-decoration: none; display: inline-flex; align-items: center; gap: .35rem;
  }
  button:hover:not(:disabled), .button:hover { background: #2b3b4a; }
  button:disabled { opacity: .55; cursor: not-allowed; }
  button.primary { background: #1f6fbf; border-color: #3d8ddb; color: #fff; font-weight: 600; }
  button.primary:hover:not(:disabled) { background: #2a7fd3; }
  button.danger { background: #5a2426; border-color: #8a3a3d; color: #ffe3e1; }
  button.danger:hover:not(:disabled) { background: #6d2b2e; }
  input[type='text'], input[type='url'], input[type='number'], textarea, select {
    font: inherit; color: var(--text); background: var(--bg); border: 1px solid #3a4b5b; border-radius: 7px; padding: .4rem .55rem;
  }
  :is(button, a, input, textarea, select, summary, [tabindex]):focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
  .badge { display: inline-block; border-radius: 999px; padding: 0 .55rem; font-size: 12px; font-weight: 600; border: 1px solid currentColor; }
  .badge.loading, .badge.joining, .badge.waiting, .badge.connecting { color: var(--warn); }
  .badge.ready { color: var(--accent-2); }
  .badge.computing { color: var(--accent); }
  .badge.gone, .badge.failed, .badge.left { color: var(--bad); }
  .warning { border-left: 3px solid var(--warn); background: #2a2516; color: #ffe9b8; padding: .45rem .7rem; border-radius: 6px; margin: .4rem 0; }
  .error { border-left: 3px solid var(--bad); background: #2d1a1a; color: #ffd9d5; padding: .45rem .7rem; border-radius: 6px; margin: .4rem 0; white-space: pre-wrap; }
  progress { width: 100%; height: .55rem; accent-color: var(--accent-2); }
  code, pre, .mono { font-family: ui-monospace, 'SF Mono', Menlo, Consolas, monospace; font-size: 12.5px; }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

/** "1.5 GiB", "320 MiB", "12 KiB" */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return '0 B';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const i = Math.min(units.length - 1, Math.floor(Math.log2(n) / 10));
  const v = n / 2 ** (10 * i);
  return `${v >= 100 || i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

/** "layers 0–13 of 28" for [0, 14) */
export function describeRange(range: readonly [number, number], total?: number): string {
  const [a, b] = range;
  if (b <= a) return total === undefined ? 'no layers' : `no layers (of ${total})`;
  const span = b - a === 1 ? `layer ${a}` : `layers ${a}–${b - 1}`;
  return total === undefined ? span : `${span} of ${total}`;
}
