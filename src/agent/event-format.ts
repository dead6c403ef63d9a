// Plain-text lines for the agent's events (the CLI prints them; a log view could too).
import type { AgentEvent } from './events.ts';

const firstLine = (text: string, max = 160): string => {
  const line = text.split('\n')[0] ?? '';
  const more = text.includes('\n') ? ` (+${text.split('\n').length - 1} lines)` : '';
  return (line.length > max ? line.slice(0, max - 1) + '…' : line) + more;
};

/** A result's first lines (errors usually show there), then how many more. */
function resultLines(mark: string, text: string, shown = 3): string[] {
  const lines = text.split('\n');
  const cut = (l: string) => (l.length > 160 ? l.slice(0, 159) + '…' : l);
  const out = [`${mark} ${cut(lines[0] ?? '')}`, ...lines.slice(1, shown).map((l) => `    ${cut(l)}`)];
  if (lines.length > shown) out.push(`    (+${lines.length - shown} lines)`);
  return out;
}

/** Formats events as lines; text deltas are gathered into one line per step. Returns the finished lines. */
export class EventPrinter {
  private text = '';

  /** Lines ready to print after this event (possibly none). */
  push(event: AgentEvent): string[] {
    if (event.type === 'text') {
      this.text += event.delta;
      return [];
    }
    const out = this.flush();
    switch (event.type) {
      case 'request':
        out.push(`> ${firstLine(event.text)}`);
        break;
      case 'step':
        out.push(`· step ${event.step} (prompt ${event.promptTokens} of ${event.contextSize} tokens)`);
        break;
      case 'call':
        out.push(`→ ${event.name} ${firstLine(JSON.stringify(event.arguments), 120)}`);
        if (event.repairs?.length) out.push(`  mended: ${event.repairs.join('; ')}`);
        break;
      case 'approval':
        out.push(`? ${event.state} (call ${event.call})`);
        break;
      case 'result':
        out.push(...resultLines(event.ok ? '←' : '✗', event.text));
        break;
      case 'note':
        out.push(`! ${firstLine(event.text, 400)}`);
        break;
      case 'summary':
        out.push(event.line);
        break;
      default:
        break;
    }
    return out;
  }

  flush(): string[] {
    const text = this.text.trim();
    this.text = '';
    return text ? [`  ${firstLine(text, 400)}`] : [];
  }
}
