// Long-poll fetches parked on a leader until there is something to read: a replica fetch waits
// for the log end offset to pass its offset, a consumer fetch for the high watermark. Each
// waiter owns one timer; release clears it, so nothing is left after wakeAll().

interface DataWaiter {
  offset: number;
  forReplica: boolean;
  resolve: () => void;
  timer: NodeJS.Timeout | null;
}

export class FetchWaiters {
  private readonly waiters = new Set<DataWaiter>();

  /** `ready(offset, forReplica)`: whether a fetch at `offset` has data now (LEO or HW past it). */
  constructor(private readonly ready: (offset: number, forReplica: boolean) => boolean) {}

  /** Fetches waiting now. */
  get size(): number {
    return this.waiters.size;
  }

  /** Resolves when data is ready, at maxWaitMs, or at wakeAll(); never rejects. */
  wait(offset: number, maxWaitMs: number, forReplica: boolean): Promise<void> {
    if (maxWaitMs <= 0 || this.ready(offset, forReplica)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const w: DataWaiter = { offset, forReplica, resolve, timer: null };
      w.timer = setTimeout(() => this.release(w), maxWaitMs);
      this.waiters.add(w);
    });
  }

  /** After an append: replica fetches whose offset the LEO passed. */
  wakeReplicas(): void {
    for (const w of this.waiters) if (w.forReplica && this.ready(w.offset, true)) this.release(w);
  }

  /** After an HW advance: consumer fetches whose offset the HW passed. */
  wakeConsumers(): void {
    for (const w of this.waiters) if (!w.forReplica && this.ready(w.offset, false)) this.release(w);
  }

  /** On a role change or close: every waiter returns and the caller finds out why. */
  wakeAll(): void {
    for (const w of [...this.waiters]) this.release(w);
  }

  private release(w: DataWaiter): void {
    if (!this.waiters.delete(w)) return;
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    w.resolve();
  }
}
