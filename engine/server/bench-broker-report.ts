// bench-broker's rows and what it prints: the median row of each configuration, the table,
// one progress line per run, and issue 14's goals judged PASS/FAIL on the same run.
import os from 'node:os';
import type { LatencySummary } from '../common/latency.ts';
import { median } from '../common/stats.ts';
import { renderTable } from '../common/text-table.ts';
import type { ResponseTimeline } from './bench-broker-probe.ts';

export interface Row {
  name: string;
  target: 'null' | 'broker';
  connections: number;
  rf: number | null;
  acks: string | null;
  durationS: number;
  requests: number;
  reqPerSec: number;
  recordsPerSec: number;
  /** Request body bytes per second / 1e6. */
  mbPerSec: number;
  latencyUs: LatencySummary;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 1-minute load average when the run ended (/proc/loadavg): other work on the machine. */
  loadAvg1: number;
  /** Answers slower than 5 x p99: how many, and when in the run (ms) they finished. */
  slow?: ReturnType<ResponseTimeline['slow']>;
  /** ms the write-back of the page cache's dirty pages took right before the measured part (null: --no-settle). */
  writeBackMs: number | null;
  /** The page cache's dirty + under-writeback KiB when the measured part started and ended (null: no /proc/vmstat). */
  dirtyKiB: { start: number; end: number } | null;
  /** acks=1 RF 1 runs at full load: req/s of the null-server run measured back to back with this one (the throughput goal's pair). */
  pairedNullReqPerSec?: number;
  /** Broker runs: ms it took to write back and drop this run's partition files from the page cache after it (absent: --no-settle). */
  droppedMs?: number;
  /** Broker runs: ms spent waiting for the previous run's backlog to replicate before this one. */
  settleMs?: number;
  /** Broker runs: the leader during the measured part (event-loop delay, segment rolls, flushes). */
  leader?: { eventLoopMaxUs: number; eventLoopP99Us: number; rolls: number; rollMaxUs: number; flushes: number };
}


export const THROUGHPUT_GOAL = 0.5;
export const TAIL_GOAL = 5;

export interface Goal {
  what: string;
  figure: string;
  goal: string;
  pass: boolean;
}

/**
 * acks=1 RF 1 against the null server: the median of the per-pair ratios when its runs were
 * paired back to back with null-server runs (the host's speed drifts by 2x within minutes
 * here, so only neighbouring runs compare), else the ratio of the two rows' medians.
 */
export function throughputRatio(a1Runs: Row[], a1: Row, nullReq: number): { ratio: number; figure: string } {
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  const pairs = a1Runs.filter((r) => r.pairedNullReqPerSec !== undefined && r.pairedNullReqPerSec > 0).map((r) => r.reqPerSec / r.pairedNullReqPerSec!);
  if (pairs.length === 0) return { ratio: a1.reqPerSec / nullReq, figure: `${r2(a1.reqPerSec / nullReq)} (${fmt(a1.reqPerSec)} / ${fmt(nullReq)})` };
  const ratio = median(pairs)!;
  return { ratio, figure: `${r2(ratio)} (median of ${pairs.length} back-to-back pairs: ${pairs.map(r2).join(', ')}; row medians ${fmt(a1.reqPerSec)} / ${fmt(nullReq)})` };
}

/** Issue 14's goals: acks=1 RF 1 at >= 0.5 x the null server; p99.9 <= 5 x p99 in every broker row. */
export function goals(rows: Row[], nullReq: number, a1Runs: Row[] = []): Goal[] {
  const out: Goal[] = [];
  const a1 = rows.find((r) => r.rf === 1 && r.acks === '1' && r.connections === rows[0].connections);
  if (a1) {
    const t = throughputRatio(a1Runs, a1, nullReq);
    out.push({ what: 'acks=1 RF 1 req/s / null server req/s', figure: t.figure, goal: `>= ${THROUGHPUT_GOAL}`, pass: t.ratio >= THROUGHPUT_GOAL });
  }
  for (const r of rows) {
    if (r.target !== 'broker') continue;
    const ratio = Math.round((r.latencyUs.p999 / Math.max(1, r.latencyUs.p99)) * 100) / 100;
    // What the leader saw over the row's runs: a stall with no segment roll is the process not
    // getting a core (compare the null server's own ratio) or a pause inside it.
    const l = r.leader;
    const rolls = l ? `${l.rolls} segment roll(s)${l.rolls > 0 ? ` (longest on the loop ${fmt(Math.round(l.rollMaxUs / 1000))} ms)` : ''}` : '';
    const seen = l ? `; leader event-loop delay max ${fmt(Math.round(l.eventLoopMaxUs / 1000))} ms, ${rolls}` : '';
    out.push({ what: `${r.name} p99.9 / p99`, figure: `${ratio} (${fmt(r.latencyUs.p999)} / ${fmt(r.latencyUs.p99)} µs${seen})`, goal: `<= ${TAIL_GOAL}`, pass: r.latencyUs.p999 <= TAIL_GOAL * r.latencyUs.p99 });
  }
  return out;
}

/** The null server's own p99.9 / p99 in the same run: the tail this machine adds to anything. */
export function machineTailLine(nullRow: Row): string {
  const ratio = Math.round((nullRow.latencyUs.p999 / Math.max(1, nullRow.latencyUs.p99)) * 100) / 100;
  return `${nullRow.name} p99.9 / p99 in this run: ${ratio} (${fmt(nullRow.latencyUs.p999)} / ${fmt(nullRow.latencyUs.p99)} µs): the machine's own tail, for comparison`;
}

/** One row per configuration: the median of each figure over its runs (not one run's row). */
export function medianRow(name: string, rs: Row[]): Row {
  // rs is never empty: each configuration ran at least once.
  const pick = (f: (r: Row) => number): number => Math.round(median(rs.map(f)) ?? 0);
  return {
    name: rs.length > 1 ? `${name} (median of ${rs.length})` : name,
    target: rs[0].target,
    connections: rs[0].connections,
    rf: rs[0].rf,
    acks: rs[0].acks,
    durationS: pick((r) => r.durationS),
    requests: rs.reduce((s, r) => s + r.requests, 0),
    reqPerSec: pick((r) => r.reqPerSec),
    recordsPerSec: pick((r) => r.recordsPerSec),
    mbPerSec: pick((r) => r.mbPerSec * 10) / 10,
    latencyUs: {
      p50: pick((r) => r.latencyUs.p50),
      p90: pick((r) => r.latencyUs.p90),
      p99: pick((r) => r.latencyUs.p99),
      p999: pick((r) => r.latencyUs.p999),
      p9999: pick((r) => r.latencyUs.p9999),
      max: Math.max(...rs.map((r) => r.latencyUs.max)),
      mean: pick((r) => r.latencyUs.mean ?? 0),
      count: rs.reduce((s, r) => s + r.latencyUs.count, 0),
    },
    non2xx: rs.reduce((s, r) => s + r.non2xx, 0),
    errors: rs.reduce((s, r) => s + r.errors, 0),
    timeouts: rs.reduce((s, r) => s + r.timeouts, 0),
    loadAvg1: median(rs.map((r) => r.loadAvg1)) ?? 0,
    writeBackMs: rs.every((r) => r.writeBackMs !== null) ? Math.max(...rs.map((r) => r.writeBackMs!)) : null,
    dirtyKiB: rs.every((r) => r.dirtyKiB !== null) ? { start: Math.max(...rs.map((r) => r.dirtyKiB!.start)), end: Math.max(...rs.map((r) => r.dirtyKiB!.end)) } : null,
    ...(rs.every((r) => r.leader)
      ? {
          settleMs: Math.max(...rs.map((r) => r.settleMs ?? 0)),
          leader: {
            eventLoopMaxUs: Math.max(...rs.map((r) => r.leader!.eventLoopMaxUs)),
            eventLoopP99Us: pick((r) => r.leader!.eventLoopP99Us),
            rolls: rs.reduce((s, r) => s + r.leader!.rolls, 0),
            rollMaxUs: Math.max(...rs.map((r) => r.leader!.rollMaxUs)),
            flushes: rs.reduce((s, r) => s + r.leader!.flushes, 0),
          },
        }
      : {}),
  };
}

/** One run as the progress line prints it: throughput, tail, load average, and the leader's view. */
export function runLine(r: Row): string {
  const l = r.latencyUs;
  let line = `${fmt(r.reqPerSec)} req/s, p50 ${fmt(l.p50)} µs, p99 ${fmt(l.p99)} µs, p99.9 ${fmt(l.p999)} µs, max ${fmt(l.max)} µs, load ${r.loadAvg1}`;
  if (r.dirtyKiB) line += `; dirty ${fmt(Math.round(r.dirtyKiB.start / 1024))} -> ${fmt(Math.round(r.dirtyKiB.end / 1024))} MiB${r.writeBackMs !== null ? ` (written back in ${fmt(r.writeBackMs)} ms before)` : ''}`;
  if (r.slow && r.slow.count > 0) line += `; ${r.slow.count} answers > 5 x p99, finished ${r.slow.firstAtMs}..${r.slow.lastAtMs} ms into the run (worst ${fmt(r.slow.worstUs)} µs at ${r.slow.worstAtMs} ms)`;
  if (r.droppedMs !== undefined) line += `; its partition dropped from the page cache in ${fmt(r.droppedMs)} ms after`;
  if (r.leader) line += `; leader: event-loop delay max ${fmt(r.leader.eventLoopMaxUs)} µs, ${r.leader.rolls} segment roll(s)${r.leader.rolls > 0 ? ` (longest on the loop ${fmt(r.leader.rollMaxUs)} µs, flushed in the background)` : ''}, ${r.leader.flushes} flush(es); waited ${fmt(r.settleMs ?? 0)} ms for replication before`;
  return line;
}

export function loadAvg1(): number {
  return Math.round(os.loadavg()[0] * 100) / 100;
}

export function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

export function table(rows: Row[]): string {
  const head = ['run', 'req/s', 'records/s', 'MB/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'p99.9/p99', 'load', 'non-2xx'];
  const body = rows.map((r) => [
    r.name,
    fmt(r.reqPerSec),
    fmt(r.recordsPerSec),
    String(r.mbPerSec),
    fmt(r.latencyUs.p50),
    fmt(r.latencyUs.p99),
    fmt(r.latencyUs.p999),
    (r.latencyUs.p999 / Math.max(1, r.latencyUs.p99)).toFixed(1),
    r.loadAvg1.toFixed(1),
    String(r.non2xx + r.errors),
  ]);
  return renderTable(head, body, (i) => i > 0);
}

