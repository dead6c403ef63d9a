// A tiny observable value for app state (plain TS, no framework): the UI subscribes through
// StoreController and re-renders on every change. Changes are batched to one notify per microtask.
import type { ReactiveController, ReactiveControllerHost } from 'lit';

export class Store<T extends object> {
  private value: T;
  private readonly listeners = new Set<(value: T) => void>();
  private queued = false;

  constructor(initial: T) {
    this.value = initial;
  }

  get state(): T {
    return this.value;
  }

  /** Merge a partial update (shallow) and notify subscribers once per microtask. */
  set(patch: Partial<T>): void {
    this.value = { ...this.value, ...patch };
    this.notifySoon();
  }

  /** Something inside the value changed in place (arrays of items): notify without copying. */
  touch(): void {
    this.notifySoon();
  }

  subscribe(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notifySoon(): void {
    if (this.queued) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      for (const l of [...this.listeners]) l(this.value);
    });
  }
}

/** Re-renders a Lit element whenever the store changes while the element is connected. */
export class StoreController<T extends object> implements ReactiveController {
  private off: (() => void) | undefined;
  constructor(private readonly host: ReactiveControllerHost, private readonly store: Store<T>) {
    host.addController(this);
  }
  get state(): T {
    return this.store.state;
  }
  hostConnected(): void {
    this.off = this.store.subscribe(() => this.host.requestUpdate());
  }
  hostDisconnected(): void {
    this.off?.();
    this.off = undefined;
  }
}
