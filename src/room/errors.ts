// Named errors of the room. `code` survives crossing a peer (it travels in the `error` frame) where the
// class does not; every message names the device, frame kind or peer it is about.

export class RoomError extends Error {
  override name = 'RoomError';
  readonly code: string = 'room';
}

/** A frame that does not decode or fails validation (bad magic, version, kind, length, field). */
export class ProtocolError extends RoomError {
  override name = 'ProtocolError';
  override readonly code: string = 'protocol';
}

/** A well-formed frame at the wrong time: stale epoch, sequence gap, positions not continuing the cache. */
export class OutOfOrderError extends ProtocolError {
  override name = 'OutOfOrderError';
  override readonly code = 'out-of-order';
}

/** A device left (closed tab, lost network, removed, or failed): names it. */
export class DeviceLeftError extends RoomError {
  override name = 'DeviceLeftError';
  override readonly code = 'device-left';
  constructor(readonly deviceName: string, readonly deviceId: string, readonly why: string) {
    super(`device "${deviceName}" left the room (${why})`);
  }
}

/** A device answered a request with an error frame (its engine or loader failed). */
export class RemoteDeviceError extends RoomError {
  override name = 'RemoteDeviceError';
  override readonly code: string;
  constructor(readonly deviceName: string, remoteCode: string, message: string) {
    super(`device "${deviceName}": ${message}`);
    this.code = remoteCode;
  }
}

/** A layer deal that cannot work: not contiguous, not covering every layer, unknown device, over budget. */
export class DealError extends RoomError {
  override name = 'DealError';
  override readonly code = 'bad-deal';
}

/** Joining failed: bad link, room not found, host refused. */
export class JoinError extends RoomError {
  override name = 'JoinError';
  override readonly code = 'join';
}

/**
 * A direct hop between two guests failed while both may still be in the room: their channel could not
 * be opened or closed, or a chain of guests stopped answering. Names the devices; the room re-deals.
 */
export class HopError extends RoomError {
  override name = 'HopError';
  override readonly code = 'hop';
}
