// The answer ends at the first stop string, as a local engine ends at the first stop token: a server that
// ignores `stop` (or sends more after it) does not get the text past it read, shown or parsed for calls.
// While the answer streams, a tail that could be the start of a stop string ("ok<|im_") is held back
// from what is shown, and shown once the next piece says it was not one.

export interface StopCut {
  /** The text before the first stop string (all of it when there is none). */
  text: string;
  /** Whether a stop string was found: the answer is over. */
  stopped: boolean;
}

/**
 * `text` cut before the first of `stops` it holds, searching from `from` (a streaming caller passes where
 * the new text began, less the longest stop string, so a long answer is not searched again per piece).
 */
export function cutAtStop(text: string, stops: readonly string[], from = 0): StopCut {
  let first = -1;
  for (const s of stops) {
    if (s === '') continue;
    const at = text.indexOf(s, Math.max(0, from - s.length + 1));
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first < 0 ? { text, stopped: false } : { text: text.slice(0, first), stopped: true };
}

/** How many characters at the end of `text` could begin one of `stops` (held back while streaming). */
export function heldBack(text: string, stops: readonly string[]): number {
  let held = 0;
  for (const s of stops) {
    for (let n = Math.min(s.length - 1, text.length); n > held; n--) {
      if (text.endsWith(s.slice(0, n))) { held = n; break; }
    }
  }
  return held;
}
