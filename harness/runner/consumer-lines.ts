// A consumer group's figures as the terminal prints them, and the cell's poll checks summed.
import { writeFileSync } from 'node:fs';
import { execa } from 'execa';
import type { CellResult, RunResult } from '../results/types.ts';
import type { TargetCapabilities } from '../targets/types.ts';
import { median } from '../../engine/common/stats.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import { catchUpMedians, measuredMedians, measuredRates, membershipText, ratesMeasured, type ConsumerGroupResult } from '../results/consumer-groups.ts';
import type { LatencySummary } from '../../engine/common/latency.ts';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
/** A figure nothing measured (no sample, no fetch answered): '-', never 0. */
const intOr = (n: number | null) => (n === null ? '-' : int(n));
const p50p99 = (l: LatencySummary) => (l.count > 0 ? `${int(l.p50)}/${int(l.p99)}` : '-/-');

export function consumerLine(g: ConsumerGroupResult): string {
  const c = g.checks;
  const bad = [c.nonMonotonic ? `${int(c.nonMonotonic)} non-monotonic` : '', c.skipped ? `${int(c.skipped)} acknowledged skipped` : '', c.corrupt ? `${int(c.corrupt)} corrupt` : ''].filter(Boolean);
  // A group that never got a fetch answered measured no rate: its 0s are said as such, not printed as rates.
  const rates = ratesMeasured(g) ? `${int(g.records)} records, ${int(g.recordsPerSec)} records/s, ${g.mbPerSec.toFixed(1)} MB/s` : `${int(g.records)} records (no fetch answered), - records/s, - MB/s`;
  return (
    `consumers ${g.name} (start ${g.start}${g.startAtSec ? ` at ${g.startAtSec} s` : ''}${membershipText(g, true)}): ${rates} over ${g.activeSec.toFixed(1)} s; ` +
    `fetch p50/p99 ${p50p99(g.fetchLatencyUs)} µs, end-to-end p50/p99 ${p50p99(g.endToEndUs)} µs; lag max ${g.fetches > 0 ? int(g.lag.max) : '-'}, at the end ${g.fetches > 0 ? int(g.lag.end) : '-'}` +
    (c.neverAcked ? `; ${int(c.neverAcked)} consumed never acknowledged` : '') +
    (g.offsetResets ? `; ${int(g.offsetResets)} OFFSET_OUT_OF_RANGE, reset to the log start` : '') +
    (typeof g.cacheHitRatio === 'number' ? `; cache hit ratio ${(g.cacheHitRatio * 100).toFixed(0)} %` : '') +
    (g.catchUp ? `; caught up in ${g.catchUp.sec.toFixed(2)} s (${g.catchUp.mbPerSec.toFixed(0)} MB/s${g.catchUp.brokerCpuMsPerGB !== null ? `, broker CPU ${int(g.catchUp.brokerCpuMsPerGB)} ms per GB` : ''}, harness client CPU ${int(g.catchUp.clientCpuPct)} % of a core)` : g.catchUp === null ? '; not caught up by the end of the load' : '') +
    (bad.length ? `; POLL CHECKS: ${bad.join(', ')}` : '') +
    (g.errors.length ? `; errors: ${g.errors.join('; ')}` : '')
  );
}

export function sumConsumerChecks(runs: NonNullable<CellResult['consumers']>): NonNullable<CellResult['consumerChecks']> {
  const out = { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 };
  for (const r of runs) for (const g of r.groups) for (const k of Object.keys(out) as Array<keyof typeof out>) out[k] += g.checks[k];
  return out;
}

/** Per cell and group, medians over the repetitions; '' without consumers. */
export function consumerSummary(run: RunResult): string {
  const rows: string[][] = [];
  for (const c of run.cells) {
    const names = [...new Set((c.consumers ?? []).flatMap((r) => r.groups.map((g) => g.name)))];
    for (const name of names) {
      const gs = (c.consumers ?? []).flatMap((r) => r.groups.filter((g) => g.name === name));
      const around = gs[0]!.producerP99Us;
      const catchUp = catchUpMedians(gs);
      const measured = measuredMedians(gs);
      const rates = measuredRates(gs);
      rows.push([
        c.id,
        name,
        `${gs[0]!.start}${gs[0]!.startAtSec ? ` at ${gs[0]!.startAtSec} s` : ''}${membershipText(gs[0]!)}`,
        intOr(rates.recordsPerSec),
        rates.mbPerSec === null ? '-' : rates.mbPerSec.toFixed(1),
        intOr(measured.fetchP99Us),
        intOr(measured.e2eP50Us),
        intOr(measured.e2eP99Us),
        intOr(measured.lagMax),
        intOr(measured.lagEnd),
        around ? `${int(around.before)} -> ${int(around.during)}` : '-',
        typeof gs[0]!.cacheHitRatio === 'number' ? `${(gs[0]!.cacheHitRatio * 100).toFixed(0)} %` : '-',
        catchUp.mbPerSec === null ? '-' : catchUp.mbPerSec.toFixed(0),
        catchUp.brokerCpuMsPerGB === null ? '-' : int(catchUp.brokerCpuMsPerGB),
      ]);
    }
  }
  if (rows.length === 0) return '';
  return ['consumers (medians over repetitions; end-to-end: the ledger\'s send time to the fetch answer, one clock):', renderTable(['cell', 'group', 'start', 'records/s', 'MB/s', 'fetch p99 µs', 'e2e p50 µs', 'e2e p99 µs', 'lag max', 'lag end', 'producer p99 µs before -> during', 'cache hit', 'catch-up MB/s', 'broker CPU ms/GB'], rows, (i) => i > 2)].join('\n');
}

/**
 * The producers' p99 in the seconds before a group started and while it read (medians of the
 * per-second p99 of the first repetition's time series, whose seconds start after the warm-up:
 * `startSec` is on that axis); null for a group that starts before the measured seconds.
 */
export function producerP99Around(c: Pick<CellResult, 'timeseries'>, startSec: number): { before: number; during: number } | null {
  if (startSec <= 0) return null;
  const startAtSec = startSec;
  const p99 = (pts: CellResult['timeseries']) => median(pts.map((p) => p.p99Us).filter((v): v is number => typeof v === 'number'));
  const before = p99(c.timeseries.filter((p) => p.t + 1 <= startAtSec));
  const during = p99(c.timeseries.filter((p) => p.t >= startAtSec));
  return before === null || during === null ? null : { before, during };
}

/** consumer.cache: cold: sync, then drop the page cache (vm.drop_caches=1) where the brokers' page cache is the host's. */
export async function dropPageCache(caps: TargetCapabilities, log: (line: string) => void): Promise<void> {
  if (caps.sysctls !== 'host') throw new Error("consumer.cache: cold drops the host's page cache; this target's brokers keep theirs elsewhere");
  const t0 = Date.now();
  await execa('sync');
  writeFileSync('/proc/sys/vm/drop_caches', '1');
  log(`page cache dropped (sync + vm.drop_caches=1) in ${Date.now() - t0} ms`);
}

/**
 * 1 - the device's reads over the seconds the group read / the bytes it was served, clamped to
 * 0..1; null without read probes or without bytes. A group that caught up is judged over its
 * catch-up (the seconds from its start to the one it caught up in, and the bytes it was served
 * until then): what it read afterwards was tailing, served from memory, and would dilute the
 * ratio of a backlog read from the device. The time series' seconds start after the warm-up.
 */
export function cacheHitRatio(g: ConsumerGroupResult, timeseries: CellResult['timeseries'], warmupSec: number): number | null {
  const from = Math.floor(g.startAtSec - warmupSec);
  const to = g.catchUp ? Math.floor(g.startAtSec - warmupSec + g.catchUp.sec) : Number.POSITIVE_INFINITY;
  const served = g.catchUp ? g.catchUp.bytes : g.bytes;
  const pts = timeseries.filter((p) => p.t >= from && p.t <= to);
  if (served <= 0 || pts.length === 0 || pts.some((p) => typeof p.readKBPerSec !== 'number')) return null;
  const deviceBytes = pts.reduce((a, p) => a + p.readKBPerSec! * 1024, 0);
  return Math.min(1, Math.max(0, 1 - deviceBytes / served));
}
