// One host clock for everything that must line up afterwards: the ack ledger, the NBD disk's
// write log, a recorder's watcher thread, fault times. It is CLOCK_MONOTONIC (process.hrtime,
// the same clock in every thread of the process) plus one offset fixed when this module loads,
// so its values compare with Date.now() * 1000 but never step when NTP adjusts the wall clock.
// A worker thread must not derive its own offset (performance.timeOrigin differs per thread by
// milliseconds): it gets this thread's `hostClockOffsetUs` and adds it to its own hrtime.

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** Host clock µs minus CLOCK_MONOTONIC µs, fixed for the process (pass it to worker threads). */
export const hostClockOffsetUs: number = Math.round((performance.timeOrigin + performance.now()) * 1000) - monotonicUs();

/** Microseconds on the host clock (integer). */
export function hostClockUs(): number {
  return monotonicUs() + hostClockOffsetUs;
}

/** Milliseconds on the host clock (fractional), comparable with Date.now(). */
export function hostClockMs(): number {
  return hostClockUs() / 1000;
}
