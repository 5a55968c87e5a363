// What every driver's produce load measures, kept the same way: latency per answered request in
// integer µs into HdrHistogram (and the coordinated-omission corrected one when the load has a
// rate), errors counted by name (apart once the fault is under way: mostly its echo, refusals and
// resets after a kill), the measured window's requests and records, and its seconds (one point a
// second: records/s, requests/s, p99), and the ProduceResult they make.
import * as hdr from 'hdr-histogram-js';
import type { ProduceOptions, ProduceResult, SecondPoint } from './types.ts';

/** The largest latency a histogram holds, µs (2 minutes). */
export const MAX_LATENCY_US = 120_000_000;

export function latencyHistogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: MAX_LATENCY_US, numberOfSignificantValueDigits: 3 });
}

/** The µs since `t0` (process.hrtime.bigint()), at least 1. */
export function elapsedUs(t0: bigint): number {
  return Math.max(1, Math.round(Number(process.hrtime.bigint() - t0) / 1000));
}

/** The load's window and how it ended, as the driver knows them. */
export interface LoadWindow {
  measuredSec: number;
  measuredBytes: number;
  loadStartMs: number;
  measureStartMs: number;
  endMs: number;
  interrupted: boolean;
}

export class LoadMeter {
  readonly latencyUs = latencyHistogram();
  readonly correctedLatencyUs: hdr.Histogram | null;
  readonly errors: Record<string, number> = {};
  readonly errorsAfterFault: Record<string, number> = {};
  readonly timeseries: SecondPoint[] = [];
  measuredRequests = 0;
  measuredRecords = 0;
  private second = { requests: 0, records: 0, hist: latencyHistogram() };

  constructor(private readonly opts: Pick<ProduceOptions, 'rate' | 'faultSignal' | 'onSecond'>) {
    this.correctedLatencyUs = opts.rate ? latencyHistogram() : null;
  }

  /** One error by name: apart once the fault is under way. */
  count(name: string): void {
    const into = this.opts.faultSignal?.aborted ? this.errorsAfterFault : this.errors;
    into[name] = (into[name] ?? 0) + 1;
  }

  /** One answered request of `records` records in the measured window, `us` its latency (µs, capped at MAX_LATENCY_US); the corrected histogram is the caller's. */
  sample(us: number, records: number): void {
    const capped = Math.min(us, MAX_LATENCY_US);
    this.latencyUs.recordValue(capped);
    this.second.hist.recordValue(capped);
    this.measuredRequests++;
    this.measuredRecords += records;
    this.second.requests++;
    this.second.records += records;
  }

  /** Starts the second now (the window opens), dropping what was counted before. */
  openSecond(): void {
    this.second = { requests: 0, records: 0, hist: latencyHistogram() };
  }

  /** Ends the current second: its point into the timeseries (and onSecond), the next one starts. */
  closeSecond(): void {
    const s = this.second;
    const point: SecondPoint = {
      // Second index from the start of the measured window, as the probes' buckets count it.
      t: this.timeseries.length,
      recordsPerSec: s.records,
      requestsPerSec: s.requests,
      p99Us: s.hist.totalCount > 0 ? s.hist.getValueAtPercentile(99) : null,
    };
    this.timeseries.push(point);
    this.opts.onSecond?.(point);
    this.openSecond();
  }

  result(window: LoadWindow): ProduceResult {
    return {
      latencyUs: this.latencyUs,
      correctedLatencyUs: this.correctedLatencyUs,
      errors: this.errors,
      errorsAfterFault: this.errorsAfterFault,
      timeseries: this.timeseries,
      measuredRequests: this.measuredRequests,
      measuredRecords: this.measuredRecords,
      ...window,
    };
  }
}
