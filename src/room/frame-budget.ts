// How many refused frames a connection may send (host.ts): each one is answered with an `error` frame,
// so a guest that floods bad frames would otherwise cost the host an answer (and memory) per frame for
// ever. Past `max` refusals within `windowMs` the connection is dropped, naming the guest.
// Documented in docs/room-protocol.md (Hostile peers).

export const FRAME_BUDGET = { max: 100, windowMs: 10_000 } as const;

export class FrameBudget {
  private times: number[] = [];
  constructor(private readonly max: number = FRAME_BUDGET.max, private readonly windowMs: number = FRAME_BUDGET.windowMs) {}

  /** Count one refusal at `now`; true once more than `max` fall within the window (the sender must go). */
  refuse(now = performance.now()): boolean {
    this.times.push(now);
    while (this.times.length > 0 && now - this.times[0]! > this.windowMs) this.times.shift();
    if (this.times.length > this.max + 1) this.times.shift(); // bounded, whatever the sender does
    return this.times.length > this.max;
  }

  get count(): number { return this.times.length; }
}
