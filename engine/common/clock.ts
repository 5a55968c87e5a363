// One host clock for everything that must line up afterwards: the ack ledger, the NBD disk's
// write log, fault times. It is monotonic (performance.now) and anchored to the wall clock at
// process start (performance.timeOrigin), so its values compare with Date.now() * 1000 but
// never step backwards when NTP adjusts the wall clock mid-run.

/** Microseconds on the host clock (integer). */
export function hostClockUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** Milliseconds on the host clock (fractional), comparable with Date.now(). */
export function hostClockMs(): number {
  return performance.timeOrigin + performance.now();
}
