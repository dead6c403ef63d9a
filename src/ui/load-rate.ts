// How fast a device's share is loading and how long it has left, from its progress figures: the one place
// both the guest's own page and the host's card for it take these numbers from, so they agree.
import { formatBytes } from './theme.ts';

/** The rate is measured over about this window: long enough to smooth a link's bursts, short enough to follow a change. */
const WINDOW_MS = 5_000;
/** No rate before this much time has passed since the first bytes: an early guess would be wild. */
const MIN_SPAN_MS = 800;

export class LoadRate {
  private samples: { t: number; bytes: number }[] = [];

  /** A progress figure (bytes done so far). Fewer bytes than before is a new load: the history starts again. */
  push(bytes: number, t = performance.now()): void {
    const last = this.samples.at(-1);
    if (last && bytes < last.bytes) this.samples = [];
    if (last && bytes === last.bytes && this.samples.length > 1) return;   // nothing new: keep the time the bytes came
    this.samples.push({ t, bytes });
    while (this.samples.length > 2 && t - this.samples[1]!.t > WINDOW_MS) this.samples.shift();
  }

  /** Bytes a second over the window, or undefined while there is too little to tell. */
  bytesPerSecond(now = performance.now()): number | undefined {
    const first = this.samples[0], last = this.samples.at(-1);
    if (!first || !last || last.bytes === first.bytes) return undefined;
    const span = Math.max(now, last.t) - first.t;
    return span < MIN_SPAN_MS ? undefined : ((last.bytes - first.bytes) / span) * 1000;
  }

  /** Seconds left for `total` bytes at the current rate, or undefined. */
  secondsLeft(total: number, now = performance.now()): number | undefined {
    const rate = this.bytesPerSecond(now);
    const last = this.samples.at(-1);
    return rate && last ? Math.max(0, (total - last.bytes) / rate) : undefined;
  }
}

function durationText(s: number): string {
  if (s < 60) return `${Math.max(1, Math.round(s))} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** "52.3 MiB / 104.0 MiB · 3.1 MiB/s · 17 s left" (rate and time once they can be told; bytes always). */
export function loadProgressText(done: number, total: number, rate: LoadRate, now = performance.now()): string {
  const parts = [`${formatBytes(done)} / ${formatBytes(total)}`];
  const bps = done < total ? rate.bytesPerSecond(now) : undefined;
  if (bps !== undefined) {
    parts.push(`${formatBytes(bps)}/s`);
    parts.push(`${durationText(rate.secondsLeft(total, now)!)} left`);
  }
  return parts.join(' · ');
}
