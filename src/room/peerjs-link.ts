// A PeerJS DataConnection as a MessageLink. The connection must be opened with
// `{reliable: true, serialization: 'raw'}` (docs/platform.md, WebRTC: the default is unordered, and the binary
// serializer re-chunks at 16 KB and halves throughput); we chunk to ≤256 KiB ourselves (wire.ts) and
// send on the RTCDataChannel directly so backpressure is ours (bufferedAmountLowThreshold).
// Close is reported on the channel's close, PeerJS's close/error, and RTCPeerConnection
// connectionState 'failed'/'closed' (a vanished peer is usually caught sooner by heartbeats).
import type { DataConnection } from 'peerjs';
import type { MessageLink } from './wire.ts';

export const LOW_WATER = 1024 * 1024;

export function peerjsLink(conn: DataConnection): MessageLink {
  const dc = conn.dataChannel;
  dc.binaryType = 'arraybuffer';
  dc.bufferedAmountLowThreshold = LOW_WATER;
  let open = true;
  const link: MessageLink = {
    onMessage: null,
    onClose: null,
    send(message) { dc.send(message as Uint8Array<ArrayBuffer>); },
    bufferedAmount: () => dc.bufferedAmount,
    drained: () => new Promise<void>((resolve) => {
      if (dc.bufferedAmount <= LOW_WATER || dc.readyState !== 'open') { resolve(); return; }
      const done = () => { dc.removeEventListener('bufferedamountlow', done); dc.removeEventListener('close', done); resolve(); };
      dc.addEventListener('bufferedamountlow', done);
      dc.addEventListener('close', done);
    }),
    isOpen: () => open && dc.readyState === 'open',
    close() { if (open) { open = false; conn.close(); closed('closed here'); } },
  };
  const closed = (why: string) => { open = false; const cb = link.onClose; link.onClose = null; cb?.(why); };
  conn.on('data', (data: unknown) => {
    if (data instanceof ArrayBuffer) link.onMessage?.(new Uint8Array(data));
    else if (ArrayBuffer.isView(data)) link.onMessage?.(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    else link.onMessage?.(new Uint8Array(0)); // a string or object: not ours; the reassembler rejects it
  });
  conn.on('close', () => closed('the data channel closed'));
  conn.on('error', (e: Error) => closed(`connection error: ${e.message}`));
  dc.addEventListener('close', () => closed('the data channel closed'));
  const pc = conn.peerConnection;
  pc?.addEventListener('connectionstatechange', () => {
    if (pc.connectionState === 'failed' || pc.connectionState === 'closed') closed(`WebRTC connection ${pc.connectionState}`);
  });
  return link;
}
