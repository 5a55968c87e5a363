// One host clock for everything that must line up afterwards: the ack ledger, the NBD disk's
// write log, a recorder's watcher thread, fault times. It is CLOCK_MONOTONIC (process.hrtime,
// the same clock in every thread and every process of the machine) plus one offset, so its
// values compare with Date.now() * 1000 but never step when NTP adjusts the wall clock.
// The offset is derived once per process from performance.timeOrigin, which differs between
// threads and processes (by microseconds to milliseconds): a worker thread gets this thread's
// `hostClockOffsetUs` and adds it to its own hrtime, and a child process that stamps times the
// harness compares (the disk server: disk-server-command.ts) adopts the harness's offset with
// adoptHostClockOffset before it stamps anything. Then every stamp is on the harness's clock.
//
// Against Date.now() (the ack ledger's clock, harness/history/ledger.ts and the drivers):
// hostClockMs() - Date.now() lies in [0, 1) ms plus a few µs of derivation while the wall clock
// has not been stepped since the offset was taken (Date.now() truncates to whole ms; NTP's
// slewing moves CLOCK_MONOTONIC with CLOCK_REALTIME). A step (settimeofday, an NTP step, a leap
// second) shows in wallClockStepMs() as its size.

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Test seam: DUROLAB_TEST_CLOCK_SKEW_US (integer µs) shifts the offset this process derives,
 * as a process whose performance.timeOrigin was that far off would have it. An adopted offset
 * replaces it (harness/disk/clock-skew.test.ts starts a disk server with it set).
 */
function testSkewUs(): number {
  const raw = process.env.DUROLAB_TEST_CLOCK_SKEW_US;
  if (raw === undefined || raw === '') return 0;
  const us = Number(raw);
  if (!Number.isSafeInteger(us)) throw new Error(`DUROLAB_TEST_CLOCK_SKEW_US: expected an integer number of microseconds, got ${JSON.stringify(raw)}`);
  return us;
}

/** Host clock µs minus CLOCK_MONOTONIC µs, fixed for the process (pass it to worker threads and the disk server). */
export let hostClockOffsetUs: number = Math.round((performance.timeOrigin + performance.now()) * 1000) - monotonicUs() + testSkewUs();

let stamped = false;

/**
 * Puts this process on another process's host clock (its `hostClockOffsetUs`). Once, before
 * anything is stamped: a stamp taken with the own offset would not compare with later ones.
 */
export function adoptHostClockOffset(offsetUs: number): void {
  if (!Number.isSafeInteger(offsetUs)) throw new Error(`adoptHostClockOffset: expected an integer offset in µs, got ${offsetUs}`);
  if (offsetUs === hostClockOffsetUs) return;
  if (stamped) throw new Error(`adoptHostClockOffset: this process already stamped host-clock times with its own offset (${hostClockOffsetUs} µs); adopt ${offsetUs} µs before the first stamp`);
  hostClockOffsetUs = offsetUs;
}

/** Microseconds on the host clock (integer). */
export function hostClockUs(): number {
  stamped = true;
  return monotonicUs() + hostClockOffsetUs;
}

/** Milliseconds on the host clock (fractional), comparable with Date.now(). */
export function hostClockMs(): number {
  return hostClockUs() / 1000;
}

/**
 * How far the wall clock (Date.now()) has been stepped away from the host clock since the
 * offset was taken, in ms: within (-1, 0] plus a few µs when it has not been (Date.now()
 * truncates to whole ms), otherwise about the step's size.
 */
export function wallClockStepMs(): number {
  return Date.now() - hostClockMs();
}
