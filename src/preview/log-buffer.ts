// The console of every served page in one list. seq numbers are the cursor the agent passes back.
import { PREVIEW_LIMITS, type LogsResult, type PreviewLogLine } from './types.ts';

export class LogBuffer {
  private lines: PreviewLogLine[] = [];
  private nextSeq = 1;

  constructor(private readonly keep: number = PREVIEW_LIMITS.keptLogLines) {}

  push(line: Omit<PreviewLogLine, 'seq'>): PreviewLogLine {
    const full = { ...line, seq: this.nextSeq++ };
    this.lines.push(full);
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
    return full;
  }

  /** The cursor that returns only lines pushed after now. */
  get cursor(): number {
    return this.nextSeq;
  }

  /** Lines with seq >= from, oldest first (no caps). */
  since(from: number, port?: number): PreviewLogLine[] {
    return this.lines.filter((l) => l.seq >= from && (port === undefined || l.port === port));
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
