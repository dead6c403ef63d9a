// Prompt reading per device in a room (issue 28 item 4): "tokens read of total" for each device as the
// prefill's micro-chunks pass through its layers. The host learns a chunk passed a stage when that stage
// returns it (room/room-engine.ts onStageRows): the host's own layers, one guest, or a chain of guests
// that hand rows straight on (then every device of the chain is credited when the chain returns the
// chunk: the host does not see the hops between them). Tokens reused from the cache count as read on
// every device, as the whole request's progress counts them.
// The chat's "reading the prompt" figure comes from the same counts (snapshot's `done`): the tokens every
// device has read, so it always equals the slowest card (the Generator's own count moves per 512-token
// chunk and read "0 of 1,017" while the cards said 352 and 368).

/** Each device's prompt tokens read, of the request's total: { deviceId: done }. */
export type DevicePrefill = Readonly<Record<string, number>>;

export class PrefillByDevice {
  private readonly done = new Map<string, number>();
  private active = false;
  private total = 0;
  private base = 0;
  private requestDone = 0;

  /** The whole request's progress (Generator's onPrefill): the first call starts a prefill, done ≥ total ends it. */
  request(done: number, total: number): void {
    if (!this.active || total !== this.total) {
      this.active = true;
      this.total = total;
      this.base = Math.min(done, total);    // reused tokens: read everywhere already
      this.done.clear();
    }
    this.requestDone = Math.min(done, total);
    if (done >= total) this.active = false;
  }

  /** `rows` prompt rows passed these devices' layers; ignored outside a prefill (decode steps, drafts). */
  rows(deviceIds: readonly string[], rows: number): void {
    if (!this.active || !(rows > 0)) return;
    for (const id of deviceIds) this.done.set(id, (this.done.get(id) ?? 0) + rows);
  }

  get reading(): boolean { return this.active; }

  /**
   * Per device in `deviceIds` (those holding layers): tokens read, at most the total; and `done`, what the
   * whole room has read: the least of the devices' counts (never below the request's own); null outside a prefill.
   */
  snapshot(deviceIds: readonly string[]): { total: number; done: number; devices: DevicePrefill } | null {
    if (!this.active) return null;
    const devices: Record<string, number> = {};
    for (const id of deviceIds) devices[id] = Math.min(this.total, this.base + (this.done.get(id) ?? 0));
    const least = deviceIds.length > 0 ? Math.min(...deviceIds.map((id) => devices[id]!)) : this.requestDone;
    return { total: this.total, done: Math.max(this.requestDone, least), devices };
  }
}
