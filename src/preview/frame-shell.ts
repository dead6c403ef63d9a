// Where a preview frame lives. The page runs in <iframe sandbox="allow-scripts" srcdoc> (an opaque
// origin, its own process), but not directly in the host's document: an about:srcdoc document's
// fallback base URL is its container document's base URL, so a page that removes its <base> would read
// the host's full address from document.baseURI (the room id is in it). So each frame sits in a shell:
// an empty about:blank iframe of the host's own origin whose only content is
// <base href="http://pooled-preview.invalid:P/">, and that base is all the page can ever fall back to.
// srcdoc (not a blob: document) also keeps location.reload() working: a sandboxed page may not
// navigate itself to a blob: URL of another origin.
//
//   host document ─ shell iframe (about:blank, host origin, no script) ─ frame (sandboxed, srcdoc)
//
// The frame talks to the host window (its parent's parent) directly with postMessage.
import { virtualOrigin } from './urls.ts';

/**
 * A shell in `container` and the sandboxed frame in it, made now if the container is in the document,
 * else as soon as it is placed. A shell moved in the DOM gets a fresh document, so the frame is made
 * again: `frame` is always the current one. Removing the shell removes the frame.
 */
export class PreviewFrame {
  readonly shell: HTMLIFrameElement;
  /** The sandboxed frame running the page; null until the shell is placed. Its contentWindow is what the bridge trusts. */
  frame: HTMLIFrameElement | null = null;

  constructor(container: HTMLElement, private readonly port: number, private readonly srcdoc: string, private readonly title: string) {
    this.shell = document.createElement('iframe');
    this.shell.setAttribute('title', title);
    this.shell.style.cssText = 'position:absolute;inset:0;width:100%;height:100%;border:0;background:#fff;';
    this.shell.addEventListener('load', () => this.build());
    container.append(this.shell);
    this.build();
  }

  private build(): void {
    const doc = this.shell.contentDocument;
    if (!doc || doc.querySelector('iframe')) return; // not placed yet, or built already
    const base = doc.createElement('base');
    base.href = `${virtualOrigin(this.port)}/`;
    doc.head.append(base);
    doc.documentElement.style.cssText = 'height:100%;margin:0;';
    doc.body.style.cssText = 'height:100%;margin:0;overflow:hidden;';
    const frame = doc.createElement('iframe');
    frame.setAttribute('sandbox', 'allow-scripts');
    frame.setAttribute('title', this.title);
    frame.referrerPolicy = 'no-referrer';
    frame.style.cssText = 'display:block;width:100%;height:100%;border:0;background:#fff;';
    frame.srcdoc = this.srcdoc;
    doc.body.append(frame);
    this.frame = frame;
  }

  /** The window the page runs in, if it is this frame's. */
  owns(source: MessageEventSource | null): boolean {
    return this.frame !== null && this.frame.contentWindow === source;
  }

  remove(): void {
    this.shell.remove();
  }
}
