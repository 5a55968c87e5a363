// Findings: sentences computed from run.json, never written by hand. Ratios are against a
// baseline cell (the first cell, or the first measured one) because absolute figures on a
// virtual disk say little; ratios within one run do.

import type { CellResult, RunResult, TimePoint } from '../results/types.ts';
import { expectationState, nothingMeasured, unavailableTrialsOf } from '../results/verdict.ts';
import {
  fmtBytes,
  fmtInt,
  fmtMB,
  fmtPct,
  fmtRate,
  fmtRatio,
  fmtSeconds,
  fmtUs,
  isMeasured,
  PAGE_BYTES,
  plural,
} from './format.ts';
import { median } from '../../engine/common/stats.ts';
import { hasThroughput, isFaultRun } from '../results/figures.ts';
import { connectionNoiseLine, isConnectionError } from './answer.ts';

function baselineCell(run: RunResult) {
  return run.cells.filter(hasThroughput).find((c) => c.throughput.recordsPerSec > 0);
}

function ratio(a: number, b: number): number {
  return b > 0 ? a / b : NaN;
}

export interface Stall {
  seconds: number;
  from: number;
  to: number;
  medianRate: number;
  maxWritebackPages?: number;
  maxDirtyPages?: number;
  maxFlushesPerSec?: number;
}

/**
 * Seconds in which a cell moved under 10% of its median rate, ignoring the first and last
 * sample (ramp-up and drain). These are the writeback stalls the time series should explain.
 */
export function stalls(series: TimePoint[]): Stall | null {
  if (series.length < 5) return null;
  const inner = series.slice(1, -1);
  const med = median(inner.map((p) => p.recordsPerSec)) ?? NaN;
  if (!(med > 0)) return null;
  const slow = inner.filter((p) => p.recordsPerSec < med * 0.1);
  if (slow.length === 0) return null;
  const maxOf = (pick: (p: TimePoint) => number | undefined) => {
    const vs = slow.map(pick).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    return vs.length ? Math.max(...vs) : undefined;
  };
  return {
    seconds: slow.length,
    from: slow[0].t,
    to: slow[slow.length - 1].t,
    medianRate: med,
    maxWritebackPages: maxOf((p) => p.nrWriteback),
    maxDirtyPages: maxOf((p) => p.nrDirty),
    maxFlushesPerSec: maxOf((p) => p.flushesPerSec),
  };
}

function trialFaults(cell: CellResult) {
  return (cell.trials ?? []).filter((t) => t.fault);
}

function lossSentence(cell: CellResult): string {
  const l = cell.ledger;
  let s = `${cell.id} lost ${fmtInt(l.ackedLost)} of ${fmtInt(l.acked)} acknowledged records (${fmtPct(ratio(l.ackedLost, l.acked))})`;
  const trials = cell.trials ?? [];
  if (trials.length > 0) {
    const losing = trials.filter((t) => t.ledger.ackedLost > 0);
    const worst = Math.max(...trials.map((t) => t.ledger.ackedLost));
    s += `; ${losing.length} of ${plural(trials.length, 'trial')} lost data, the worst ${fmtInt(worst)} records`;
    const windows = trials.map((t) => t.fault?.lossWindowSec).filter((w): w is number => typeof w === 'number');
    if (windows.length) s += `, acknowledged up to ${fmtSeconds(Math.max(...windows))} before the cut`;
  }
  return s;
}

export function findings(run: RunResult): string[] {
  const out: string[] = [];
  const cells = run.cells;
  // A cell without a throughput (no repetition finished its load) is not measured, not slow.
  const measured = cells.filter(hasThroughput).filter((c) => c.throughput.recordsPerSec > 0);

  if (run.status !== 'complete') {
    const ok = cells.filter((c) => c.status === 'ok').length;
    out.push(
      `This run ${run.status === 'failed' ? 'failed' : 'is incomplete'}: ${ok} of ${plural(cells.length, 'cell')} finished${run.endedAt ? '' : ' and it has no end time'}; ` +
        'everything below covers only what was recorded.',
    );
  }

  const notMeasured = cells.filter((c) => !isMeasured(c));
  if (notMeasured.length) {
    out.push(`Not measured: ${notMeasured.map((c) => `${c.id} (${c.status}${c.note ? `: ${c.note}` : ''})`).join('; ')}.`);
  }
  const interrupted = cells.filter((c) => c.status === 'interrupted');
  if (interrupted.length) {
    out.push(`Interrupted, figures are partial: ${interrupted.map((c) => c.id).join(', ')}.`);
  }
  const noLoad = cells.filter((c) => isMeasured(c) && !hasThroughput(c));
  if (noLoad.length) {
    out.push(`No repetition finished its load, so throughput was not measured: ${noLoad.map((c) => c.id).join(', ')}.`);
  }

  // A fault scenario is answered by its loss; its speed (often under emulation) comes last.
  const fault = isFaultRun(run);
  const perf: string[] = [];
  if (measured.length === 1) {
    const c = measured[0];
    perf.push(
      `Only ${c.id} was measured: ${fmtRate(c.throughput.recordsPerSec)} records/s (${fmtMB(c.throughput.mbPerSec)} MB/s), p99 ${fmtUs(c.latencyUs.p99)} µs.`,
    );
  } else if (measured.length > 1) {
    const byRate = [...measured].sort((a, b) => b.throughput.recordsPerSec - a.throughput.recordsPerSec);
    const fast = byRate[0];
    const slow = byRate[byRate.length - 1];
    perf.push(
      `Fastest: ${fast.id} at ${fmtRate(fast.throughput.recordsPerSec)} records/s (${fmtMB(fast.throughput.mbPerSec)} MB/s); ` +
        `slowest: ${slow.id} at ${fmtRate(slow.throughput.recordsPerSec)} records/s, ` +
        `${fmtRatio(ratio(fast.throughput.recordsPerSec, slow.throughput.recordsPerSec))} slower.`,
    );
    const byP99 = [...measured].filter((c) => c.latencyUs.count > 0).sort((a, b) => a.latencyUs.p99 - b.latencyUs.p99);
    if (byP99.length > 1) {
      const lo = byP99[0];
      const hi = byP99[byP99.length - 1];
      perf.push(
        `Lowest p99: ${lo.id} at ${fmtUs(lo.latencyUs.p99)} µs; highest: ${hi.id} at ${fmtUs(hi.latencyUs.p99)} µs ` +
          `(${fmtRatio(ratio(hi.latencyUs.p99, lo.latencyUs.p99))}); worst max ${fmtUs(Math.max(...byP99.map((c) => c.latencyUs.max)))} µs.`,
      );
    }
  }

  const base = baselineCell(run);
  if (base && measured.length > 1) {
    const baseNote = base === cells[0] ? 'the first cell' : `the first measured cell, since ${cells[0].id} was ${cells[0].status}`;
    perf.push(`Ratios below are against ${base.id} (${baseNote}).`);
    for (const c of measured) {
      if (c === base) continue;
      const parts = [`${fmtRatio(ratio(c.throughput.recordsPerSec, base.throughput.recordsPerSec))} the throughput`];
      const p99 = ratio(c.latencyUs.p99, base.latencyUs.p99);
      if (Number.isFinite(p99)) parts.push(`${fmtRatio(p99)} the p99`);
      perf.push(`${c.id}: ${parts.join(' and ')} of ${base.id}, ${fmtInt(c.ledger.ackedLost)} acked records lost.`);
    }
  }

  if (!fault) out.push(...perf);

  const totalAcked = cells.reduce((a, c) => a + c.ledger.acked, 0);
  const totalLost = cells.reduce((a, c) => a + c.ledger.ackedLost, 0);
  const faults = cells.reduce((a, c) => a + trialFaults(c).length, 0);
  if (totalAcked === 0) {
    out.push('No record was acknowledged in any cell, so there is no loss to measure.');
  } else if (totalLost === 0) {
    out.push(
      `No acknowledged record was lost in any cell (${fmtInt(totalAcked)} acknowledged` +
        (faults ? ` over ${plural(faults, 'injected fault')})` : ', no fault injected)') +
        '.',
    );
  } else {
    const losing = cells.filter((c) => c.ledger.ackedLost > 0).sort((a, b) => b.ledger.ackedLost - a.ledger.ackedLost);
    out.push(`Most loss: ${lossSentence(losing[0])}.`);
    if (losing.length > 1) {
      out.push(`Also lost acknowledged records: ${losing.slice(1).map((c) => `${c.id} (${fmtInt(c.ledger.ackedLost)})`).join(', ')}.`);
    }
    const safe = cells.filter((c) => isMeasured(c) && c.ledger.acked > 0 && c.ledger.ackedLost === 0);
    if (safe.length) out.push(`No acknowledged loss: ${safe.map((c) => c.id).join(', ')}.`);
  }

  // acks=0 answers before the append: such a cell promises nothing, so "0 lost" says nothing.
  const unpromised = cells.filter(hasThroughput).filter((c) => c.ledger.acked === 0 && c.throughput.recordsPerSec > 0);
  if (unpromised.length && totalAcked > 0) {
    out.push(
      `${unpromised.map((c) => c.id).join(', ')}: nothing was acknowledged (the broker answered before appending), so no loss can be counted` +
        unpromised.map((c) => (c.ledger.unackedPresent ? `; ${c.id}: ${fmtInt(c.ledger.unackedPresent)} records sent were found in the log` : '')).join('') +
        '.',
    );
  }

  for (const c of cells) {
    const bad: string[] = [];
    if (c.ledger.duplicates) bad.push(plural(c.ledger.duplicates, 'duplicate'));
    if (c.ledger.outOfOrder) bad.push(`${fmtInt(c.ledger.outOfOrder)} out of order`);
    if (c.ledger.corrupt) bad.push(plural(c.ledger.corrupt, 'corrupt record'));
    if (bad.length) out.push(`${c.id}: ${bad.join(', ')}.`);
  }

  const noise = connectionNoiseLine(run);
  if (noise) out.push(noise);
  for (const c of cells) {
    // In a fault run, connection errors are the line above, not one finding per cell.
    const counted = Object.entries(c.errors ?? {}).filter(([k, v]) => v > 0 && !(noise && isConnectionError(k)));
    const n = counted.reduce((a, [, v]) => a + v, 0);
    if (n === 0) continue;
    const kinds = counted
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${fmtInt(v)}`);
    out.push(`${c.id}: ${plural(n, 'error')} (${kinds.join(', ')}).`);
  }

  // Only brokers that report their flushes (durolab's): Kafka and NATS give clients no count.
  const flushing = measured.flatMap((c) => ((c.broker.flushes ?? 0) > 0 && c.broker.flushTimeUs ? [{ c, flushes: c.broker.flushes!, times: c.broker.flushTimeUs }] : []));
  if (flushing.length) {
    const { c: worst, flushes, times } = [...flushing].sort((a, b) => b.times.p99 - a.times.p99)[0]!;
    const perFlush = ratio(worst.ledger.acked, flushes);
    out.push(
      `Slowest flushes: ${worst.id}, p99 ${fmtUs(times.p99)} µs, max ${fmtUs(times.max)} µs over ` +
        `${plural(flushes, 'flush', 'flushes')}` +
        (Number.isFinite(perFlush) ? ` (${fmtRate(perFlush)} acknowledged records per flush).` : '.'),
    );
  }

  for (const c of measured) {
    const s = stalls(c.timeseries ?? []);
    if (!s) continue;
    const span = s.from === s.to ? `at t=${s.from} s` : `between t=${s.from} and ${s.to} s`;
    const beside: string[] = [];
    if (s.maxWritebackPages !== undefined) beside.push(`nr_writeback up to ${fmtBytes(s.maxWritebackPages * PAGE_BYTES)}`);
    if (s.maxDirtyPages !== undefined) beside.push(`nr_dirty up to ${fmtBytes(s.maxDirtyPages * PAGE_BYTES)}`);
    if (s.maxFlushesPerSec !== undefined) beside.push(`${fmtRate(s.maxFlushesPerSec)} device flushes/s`);
    out.push(
      `${c.id} stalled for ${plural(s.seconds, 'second')} (under 10% of its median ${fmtRate(s.medianRate)} records/s) ${span}` +
        (beside.length ? `, with ${beside.join(', ')}.` : '.'),
    );
  }

  if (fault) out.push(...perf);

  const tcg = cells.filter((c) => c.accelerator === 'tcg');
  if (tcg.length) {
    out.push(
      `${tcg.length === cells.length ? 'All cells' : tcg.map((c) => c.id).join(', ')} ran in a VM under TCG (software emulation): ` +
        'throughput and latency there are not comparable to the process target; compare loss, not speed.',
    );
  }
  return out;
}

/** One word for the run's expectations, for the page header and the index. */
export function verdict(run: RunResult): { text: string; tone: 'pass' | 'fail' | 'none' } {
  const n = run.expectations.length;
  if (nothingMeasured(run)) return { text: 'NOTHING MEASURED (every cell skipped or failed)', tone: 'fail' };
  if (n === 0) return { text: 'no expectations', tone: 'none' };
  const states = run.expectations.map(expectationState);
  const passed = states.filter((s) => s === 'pass').length;
  const notEvaluated = states.filter((s) => s === 'not-evaluated').length;
  const failed = states.filter((s) => s === 'fail').length;
  const naNote = notEvaluated ? `, ${notEvaluated} NOT EVALUATED` : '';
  // A trial whose cluster did not come back fails the run (harness/results/verdict.ts), whatever the expectations say.
  const unavailable = unavailableTrialsOf(run).length;
  const unNote = unavailable ? `; ${unavailable} trial(s) UNAVAILABLE after the fault` : '';
  if (failed > 0) return { text: `FAILED ${failed} of ${n}${naNote}${unNote}`, tone: 'fail' };
  if (unavailable) return { text: `FAILED: ${unavailable} trial(s) UNAVAILABLE after the fault${naNote}`, tone: 'fail' };
  // Missing evidence is not a pass: the run exits non-zero, and the page says so in the same tone.
  if (notEvaluated > 0) return { text: `NOT EVALUATED ${notEvaluated} of ${n} (passed ${passed})`, tone: 'fail' };
  return { text: `passed ${passed}/${n}`, tone: 'pass' };
}
