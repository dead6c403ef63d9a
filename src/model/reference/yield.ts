// The CPU reference engine computes synchronously; on a page's main thread a long runLayers would freeze
// the page (no input, no rendering, no heartbeat answers) until a whole answer is done, because awaiting
// already-resolved promises never returns to the event loop. It therefore yields once per call and
// between layers of a long batch. setImmediate (Node) and a MessageChannel (browsers) are macrotasks
// without setTimeout's 1–4 ms clamp.

let channel: MessageChannel | undefined;
const waiting: (() => void)[] = [];

export function yieldToEventLoop(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    if (!channel) {
      channel = new MessageChannel();
      channel.port1.onmessage = () => waiting.shift()?.();
    }
    return new Promise((resolve) => { waiting.push(resolve); channel!.port2.postMessage(0); });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}
