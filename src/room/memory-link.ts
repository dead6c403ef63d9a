// Two MessageLinks joined in memory, for Node tests and the bench: messages arrive asynchronously, in
// order, copied (as over a real channel), with the 256 KiB message limit of a data channel enforced.
import { MAX_WIRE_MESSAGE, type MessageLink } from './wire.ts';

class MemoryLink implements MessageLink {
  onMessage: ((m: Uint8Array) => void) | null = null;
  onClose: ((why: string) => void) | null = null;
  other!: MemoryLink;
  open = true;
  private inFlight = 0;
  private waiters: (() => void)[] = [];

  send(message: Uint8Array): void {
    if (!this.open) throw new Error('memory link is closed');
    if (message.length > MAX_WIRE_MESSAGE) {
      // What a data channel does with an oversized message: the connection goes away.
      this.close();
      return;
    }
    const copy = message.slice();
    this.inFlight += copy.length;
    setTimeout(() => {
      this.inFlight -= copy.length;
      if (this.inFlight === 0) this.waiters.splice(0).forEach((w) => w());
      if (this.other.open) this.other.onMessage?.(copy);
    }, 0);
  }
  bufferedAmount(): number { return this.inFlight; }
  drained(): Promise<void> {
    return this.inFlight === 0 || !this.open ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
  isOpen(): boolean { return this.open; }
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.waiters.splice(0).forEach((w) => w());
    setTimeout(() => {
      this.onClose?.('closed');
      if (this.other.open) { this.other.open = false; this.other.onClose?.('closed by the other side'); }
    }, 0);
  }
  /** Vanish without a goodbye (a killed tab): the other side is NOT told; only heartbeats notice. */
  vanish(): void {
    this.open = false;
    this.other.onMessage = null;
    this.onMessage = null;
  }
}

export function memoryLinkPair(): [MessageLink & { vanish(): void }, MessageLink & { vanish(): void }] {
  const a = new MemoryLink();
  const b = new MemoryLink();
  a.other = b;
  b.other = a;
  return [a, b];
}
