// The broker's event-loop delay (perf_hooks.monitorEventLoopDelay): how long a timer that
// should fire now waits because something synchronous holds the loop (a flush on roll, a big
// JSON, a GC pause). Shown in /v1/metrics; `?resetEventLoop=1` starts a new window, so a
// benchmark can see the worst stall of one measured run.
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopDelaySummary {
  /** Window start (ms since the epoch): broker start or the last reset. */
  sinceMs: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  samples: number;
}

/** Sampling resolution: a stall shorter than this is not seen. */
const RESOLUTION_MS = 10;

export class EventLoopDelay {
  private readonly h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private sinceMs = Date.now();

  start(): void {
    this.h.enable();
  }

  stop(): void {
    this.h.disable();
  }

  /** The window so far (delays beyond the resolution, in µs); `reset` starts a new one. */
  summary(reset = false): EventLoopDelaySummary {
    const h = this.h;
    const us = (ns: number): number => Math.round(ns / 1000);
    const out: EventLoopDelaySummary = {
      sinceMs: this.sinceMs,
      p50Us: h.count > 0 ? us(h.percentile(50)) : 0,
      p99Us: h.count > 0 ? us(h.percentile(99)) : 0,
      maxUs: h.count > 0 ? us(h.max) : 0,
      samples: h.count,
    };
    if (reset) {
      h.reset();
      this.sinceMs = Date.now();
    }
    return out;
  }
}
