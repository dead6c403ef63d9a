// The console of every served page, one ring buffer per port: a page flooding its console overwrites
// only its own oldest lines (in O(1) a line, never a splice), and other ports keep theirs. seq numbers
// are global and only grow: they are the cursor the agent passes back.
import { PREVIEW_LIMITS, type LogsResult, type PreviewLogLine } from './types.ts';

/** A fixed-size ring of lines, oldest first; seq grows along it, so a cursor is found by binary search. */
class Ring {
  private readonly slots: (PreviewLogLine | undefined)[];
  private start = 0;
  count = 0;
  constructor(readonly capacity: number) {
    this.slots = new Array<PreviewLogLine | undefined>(capacity);
  }
  push(line: PreviewLogLine): void {
    if (this.count < this.capacity) { this.slots[(this.start + this.count) % this.capacity] = line; this.count++; return; }
    this.slots[this.start] = line; // overwrite the oldest
    this.start = (this.start + 1) % this.capacity;
  }
  private at(i: number): PreviewLogLine { return this.slots[(this.start + i) % this.capacity]!; }
  /** Lines with seq >= from, oldest first. */
  since(from: number): PreviewLogLine[] {
    let lo = 0, hi = this.count;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.at(mid).seq < from) lo = mid + 1; else hi = mid; }
    const out: PreviewLogLine[] = [];
    for (let i = lo; i < this.count; i++) out.push(this.at(i));
    return out;
  }
}

export class LogBuffer {
  private readonly rings = new Map<number, Ring>();
  private nextSeq = 1;

  /** keep: the most lines kept per port. */
  constructor(private readonly keep: number = PREVIEW_LIMITS.keptLogLines) {}

  push(line: Omit<PreviewLogLine, 'seq'>): PreviewLogLine {
    const full = { ...line, seq: this.nextSeq++ };
    let ring = this.rings.get(line.port);
    if (!ring) { ring = new Ring(this.keep); this.rings.set(line.port, ring); }
    ring.push(full);
    return full;
  }

  /** The cursor that returns only lines pushed after now. */
  get cursor(): number {
    return this.nextSeq;
  }

  /** Lines kept, all ports together. */
  get size(): number {
    let n = 0;
    for (const r of this.rings.values()) n += r.count;
    return n;
  }

  /** Lines with seq >= from, oldest first (no caps). */
  since(from: number, port?: number): PreviewLogLine[] {
    if (port !== undefined) return this.rings.get(port)?.since(from) ?? [];
    const all: PreviewLogLine[] = [];
    for (const r of this.rings.values()) all.push(...r.since(from));
    return this.rings.size > 1 ? all.sort((a, b) => a.seq - b.seq) : all;
  }

  /**
   * The newest lines after the cursor that fit maxLines and maxChars (newest last), and the next cursor.
   * A single line longer than maxChars is cut so the newest line always shows.
   */
  read(cursor = 0, maxLines: number = PREVIEW_LIMITS.logLines, maxChars: number = PREVIEW_LIMITS.logChars): LogsResult {
    const fresh = this.since(cursor);
    const picked: PreviewLogLine[] = [];
    let chars = 0;
    for (let i = fresh.length - 1; i >= 0 && picked.length < maxLines; i--) {
      const line = fresh[i]!;
      const cost = formatLogLine(line).length + 1;
      if (chars + cost > maxChars) {
        if (picked.length === 0) picked.push({ ...line, text: cutLine(line, maxChars) });
        break;
      }
      chars += cost;
      picked.push(line);
    }
    picked.reverse();
    return { lines: picked, skipped: fresh.length - picked.length, next: this.nextSeq };
  }
}

/** "[error] main.js:3:7 Uncaught TypeError: x is undefined" */
export function formatLogLine(line: Pick<PreviewLogLine, 'level' | 'text'>): string {
  return `[${line.level}] ${line.text}`;
}

function cutLine(line: PreviewLogLine, maxChars: number): string {
  const room = Math.max(0, maxChars - formatLogLine({ ...line, text: '' }).length - 2);
  return line.text.slice(0, room) + '…';
}
