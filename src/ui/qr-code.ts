// <pooled-qr-code>, in the room panel: the invite link as a QR code.
import { LitElement, css, html } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import QRCode from 'qrcode';

/** The invite link as a QR code, so a phone can join by pointing its camera at the host's screen. */
@customElement('pooled-qr-code')
export class QrCode extends LitElement {
  @property() text = '';
  @state() private dataUrl = '';
  @state() private error = '';

  static override styles = css`
    :host { display: inline-block; }
    img { display: block; width: 9rem; height: 9rem; image-rendering: pixelated; border-radius: 6px; background: #fff; }
    .error { color: #ff8a80; font-size: 12px; }
  `;

  override updated(changed: Map<string, unknown>): void {
    if (!changed.has('text') || !this.text) return;
    const text = this.text;
    QRCode.toDataURL(text, { margin: 2, width: 288, errorCorrectionLevel: 'M' })
      .then((url) => { if (text === this.text) { this.dataUrl = url; this.error = ''; } })
      .catch((e: Error) => { this.error = `QR code failed: ${e.message}`; });
  }

  override render() {
    if (this.error) return html`<span class="error">${this.error}</span>`;
    return this.dataUrl ? html`<img src=${this.dataUrl} alt="QR code of the invite link" data-testid="invite-qr" />` : html``;
  }
}

declare global {
  interface HTMLElementTagNameMap { 'pooled-qr-code': QrCode }
}
