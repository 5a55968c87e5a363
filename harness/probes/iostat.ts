// iostat -x figures between two /proc/diskstats readings, with sysstat's formulas
// (iostat.c / rd_stats.c compute_ext_disk_stats):
//   x/s     = delta count / interval
//   kB/s    = delta sectors / 2 / interval
//   x_await = delta ms spent / delta requests completed (0 when none completed)
//   aqu-sz  = delta weighted ms / interval ms
//   %util   = delta io_ticks ms / interval ms * 100
// sysstat takes the interval from /proc/uptime; we take it from the samples' own
// timestamps, which is the only clock a guest's streamed text carries.

import type { DiskCounters } from './diskstats.ts';

export interface IostatFigures {
  /** Interval the figures cover, ms. */
  intervalMs: number;
  rPerSec: number;
  wPerSec: number;
  rkBPerSec: number;
  wkBPerSec: number;
  rrqmPerSec: number;
  wrqmPerSec: number;
  rAwaitMs: number;
  wAwaitMs: number;
  /** null when the kernel has no flush counters (before 5.5). */
  fPerSec: number | null;
  fAwaitMs: number | null;
  aquSz: number;
  utilPct: number;
}

const U32 = 2 ** 32;

// Time fields are printed as 32-bit (%u) even on 64-bit kernels and wrap after ~49.7 days
// of busy time; on 32-bit guests every field is 32-bit. A drop from above 2^32 can only
// be a reset (device re-created), which we report as no activity.
function delta(a: number, b: number): number {
  if (b >= a) return b - a;
  return a < U32 ? b + U32 - a : 0;
}

function perReq(time: number, count: number): number {
  return count > 0 ? time / count : 0;
}

/** iostat -x figures for the interval between two readings of the same device (a before b). */
export function iostatBetween(a: DiskCounters, b: DiskCounters): IostatFigures {
  if (a.device !== b.device) {
    throw new Error(`iostatBetween: readings are of different devices (${a.device} vs ${b.device})`);
  }
  const intervalMs = b.tMs - a.tMs;
  if (!(intervalMs > 0)) {
    throw new Error(
      `iostatBetween: ${a.device} readings must be in time order with a positive interval (got ${a.tMs} then ${b.tMs})`,
    );
  }
  const sec = intervalMs / 1000;
  const reads = delta(a.readsCompleted, b.readsCompleted);
  const writes = delta(a.writesCompleted, b.writesCompleted);
  const hasFlush = a.flushesCompleted !== undefined && b.flushesCompleted !== undefined;
  const flushes = hasFlush ? delta(a.flushesCompleted as number, b.flushesCompleted as number) : 0;
  const flushMs = hasFlush ? delta(a.flushTimeMs ?? 0, b.flushTimeMs ?? 0) : 0;
  return {
    intervalMs,
    rPerSec: reads / sec,
    wPerSec: writes / sec,
    rkBPerSec: delta(a.sectorsRead, b.sectorsRead) / 2 / sec,
    wkBPerSec: delta(a.sectorsWritten, b.sectorsWritten) / 2 / sec,
    rrqmPerSec: delta(a.readsMerged, b.readsMerged) / sec,
    wrqmPerSec: delta(a.writesMerged, b.writesMerged) / sec,
    rAwaitMs: perReq(delta(a.readTimeMs, b.readTimeMs), reads),
    wAwaitMs: perReq(delta(a.writeTimeMs, b.writeTimeMs), writes),
    fPerSec: hasFlush ? flushes / sec : null,
    fAwaitMs: hasFlush ? perReq(flushMs, flushes) : null,
    aquSz: delta(a.weightedIoTimeMs, b.weightedIoTimeMs) / intervalMs,
    // io_ticks advance in jiffies while our interval is wall-clock, so a saturated device
    // can read a little over 100 %; sysstat shows such values, we cap them.
    utilPct: Math.min(100, (delta(a.ioTimeMs, b.ioTimeMs) / intervalMs) * 100),
  };
}

/** Linear interpolation of the cumulative counters at time t (a.tMs <= t <= b.tMs). */
export function interpolateCounters(a: DiskCounters, b: DiskCounters, t: number): DiskCounters {
  const span = b.tMs - a.tMs;
  const f = span > 0 ? Math.min(1, Math.max(0, (t - a.tMs) / span)) : 1;
  // Keeping a 32-bit counter below 2^32 lets delta() see a later wrap as a wrap.
  const lerp = (x: number, y: number): number => {
    const v = x + delta(x, y) * f;
    return x < U32 && v >= U32 ? v - U32 : v;
  };
  const out: DiskCounters = {
    tMs: t,
    device: a.device,
    readsCompleted: lerp(a.readsCompleted, b.readsCompleted),
    readsMerged: lerp(a.readsMerged, b.readsMerged),
    sectorsRead: lerp(a.sectorsRead, b.sectorsRead),
    readTimeMs: lerp(a.readTimeMs, b.readTimeMs),
    writesCompleted: lerp(a.writesCompleted, b.writesCompleted),
    writesMerged: lerp(a.writesMerged, b.writesMerged),
    sectorsWritten: lerp(a.sectorsWritten, b.sectorsWritten),
    writeTimeMs: lerp(a.writeTimeMs, b.writeTimeMs),
    inFlight: f < 0.5 ? a.inFlight : b.inFlight,
    ioTimeMs: lerp(a.ioTimeMs, b.ioTimeMs),
    weightedIoTimeMs: lerp(a.weightedIoTimeMs, b.weightedIoTimeMs),
  };
  if (a.discardsCompleted !== undefined && b.discardsCompleted !== undefined) {
    out.discardsCompleted = lerp(a.discardsCompleted, b.discardsCompleted);
    out.discardsMerged = lerp(a.discardsMerged ?? 0, b.discardsMerged ?? 0);
    out.sectorsDiscarded = lerp(a.sectorsDiscarded ?? 0, b.sectorsDiscarded ?? 0);
    out.discardTimeMs = lerp(a.discardTimeMs ?? 0, b.discardTimeMs ?? 0);
  }
  if (a.flushesCompleted !== undefined && b.flushesCompleted !== undefined) {
    out.flushesCompleted = lerp(a.flushesCompleted, b.flushesCompleted);
    out.flushTimeMs = lerp(a.flushTimeMs ?? 0, b.flushTimeMs ?? 0);
  }
  return out;
}
