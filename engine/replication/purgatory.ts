import { BrokerError } from './errors.ts';

interface Waiter {
  requiredOffset: number;
  resolve: () => void;
  reject: (e: BrokerError) => void;
  timer: NodeJS.Timeout | null;
  done: boolean;
}

/**
 * Kafka's DelayedProduce purgatory for acks=all: each request waits until the high watermark
 * reaches its required offset (last offset of its batch + 1). A leader assigns offsets in
 * increasing order, so arrival order is required-offset order and a FIFO queue is sorted: an HW
 * advance completes a prefix in O(completed). Each waiter owns one timer, cleared when it
 * completes; after failAll() no timer is left. Nothing here blocks the event loop.
 */
export class DelayedProducePurgatory {
  private queue: Waiter[] = [];
  private head = 0;
  private pending = 0;
  completed = 0;
  expired = 0;

  /** Requests still waiting. */
  get size(): number {
    return this.pending;
  }

  /**
   * Parks a request until complete() reaches requiredOffset, it times out (REQUEST_TIMED_OUT) or
   * failAll() is called. requiredOffset must not be below the last one added.
   */
  add(requiredOffset: number, timeoutMs: number, describe = 'produce request'): Promise<void> {
    const last = this.queue.length > this.head ? this.queue[this.queue.length - 1] : undefined;
    if (last && requiredOffset < last.requiredOffset) {
      throw new Error(`purgatory: required offset ${requiredOffset} is below the last one parked (${last.requiredOffset})`);
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { requiredOffset, resolve, reject, timer: null, done: false };
      w.timer = setTimeout(() => {
        this.finish(w);
        this.expired++;
        // Timeouts usually fire in arrival order: drop finished waiters at the head at once so
        // a stuck HW does not keep thousands of settled entries alive.
        while (this.head < this.queue.length && this.queue[this.head].done) this.head++;
        this.compact();
        w.reject(
          new BrokerError('REQUEST_TIMED_OUT', `${describe}: the high watermark did not reach offset ${requiredOffset} within ${timeoutMs} ms`, {
            requiredOffset,
            timeoutMs,
          }),
        );
      }, Math.max(0, timeoutMs));
      this.queue.push(w);
      this.pending++;
    });
  }

  /**
   * The HW is now `hw`: every request with requiredOffset <= hw completes. `check` decides how
   * (null = success, else the error, e.g. NOT_ENOUGH_REPLICAS_AFTER_APPEND); it is evaluated at
   * completion time, as Kafka's checkEnoughReplicasReachOffset is.
   */
  complete(hw: number, check: () => BrokerError | null): number {
    let n = 0;
    let err: BrokerError | null | undefined;
    while (this.head < this.queue.length && this.queue[this.head].requiredOffset <= hw) {
      const w = this.queue[this.head++];
      if (w.done) continue;
      if (err === undefined) err = check();
      this.finish(w);
      this.completed++;
      n++;
      if (err) w.reject(err);
      else w.resolve();
    }
    this.compact();
    return n;
  }

  /** Fails every waiting request with the error (role change, ISR below minimum, close). */
  failAll(makeError: () => BrokerError): number {
    let n = 0;
    const err = makeError();
    while (this.head < this.queue.length) {
      const w = this.queue[this.head++];
      if (w.done) continue;
      this.finish(w);
      n++;
      w.reject(err);
    }
    this.compact();
    return n;
  }

  private finish(w: Waiter): void {
    w.done = true;
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    this.pending--;
  }

  // Timed-out waiters stay in the array (marked done) until the head passes them; drop the
  // consumed prefix now and then so the array does not grow without bound.
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
