// The engine's performance goals, judged on one bench run's rows (ratios against the
// baseline measured in the same run, never absolute numbers).
import type { BenchRow } from './bench-row.ts';
import { median } from '../common/stats.ts';
import { fmtBatch } from './text-format.ts';

export interface GoalCheck {
  row: string;
  value: number;
  limit: number;
  pass: boolean;
}

export interface GoalResult {
  id: string;
  description: string;
  /** null: no row of this run measured it (filtered out or failed). */
  pass: boolean | null;
  checks: GoalCheck[];
  /** Rows the goal covers that failed to run. */
  errors: string[];
}

export function rowLabel(r: Pick<BenchRow, 'mode' | 'flush' | 'batchBytes'> & { verify?: boolean }): string {
  return `${r.mode} ${r.flush} ${fmtBatch(r.batchBytes)}${r.verify === false ? ' verify off' : ''}`;
}

/** Goals are about the broker's default path: rows with verification off only show what it costs. */
function judge(id: string, description: string, rows: BenchRow[], applies: (r: BenchRow) => boolean, measure: (r: BenchRow) => { value: number; limit: number; pass: boolean }): GoalResult {
  const covered = rows.filter((r) => r.verify !== false && applies(r));
  const checks = covered.filter((r) => !r.error).map((r) => ({ row: rowLabel(r), ...measure(r) }));
  const errors = covered.filter((r) => r.error).map((r) => `${rowLabel(r)}: ${r.error}`);
  const pass = checks.length === 0 && errors.length === 0 ? null : errors.length === 0 && checks.every((c) => c.pass);
  return { id, description, pass, checks, errors };
}

export function evaluateGoals(rows: BenchRow[]): GoalResult[] {
  return [
    judge(
      'ratio-large-batches',
      'engine/baseline throughput ratio >= 0.85 at 64 KiB and 1 MiB batches, in every mode and flush policy',
      rows,
      (r) => r.batchBytes >= 65536,
      (r) => ({ value: r.ratio, limit: 0.85, pass: r.ratio >= 0.85 }),
    ),
    judge(
      'ratio-4k-buffered',
      'engine/baseline throughput ratio >= 0.7 at 4 KiB batches, buffered',
      rows,
      (r) => r.batchBytes === 4096 && r.mode === 'buffered',
      (r) => ({ value: r.ratio, limit: 0.7, pass: r.ratio >= 0.7 }),
    ),
    judge(
      'per-batch-fdatasync-p50',
      "per-batch fdatasync: engine append p50 <= 1.25 x the baseline's write+fdatasync p50 per operation",
      rows,
      (r) => r.flush === 'per-batch',
      (r) => {
        const value = r.baselineOpP50Us > 0 ? Math.round((r.p50Us / r.baselineOpP50Us) * 1000) / 1000 : Infinity;
        return { value, limit: 1.25, pass: value <= 1.25 };
      },
    ),
  ];
}

export interface VerifyCost {
  row: string;
  /** Ratios against the baseline with verification on (default) and off. */
  ratioOn: number;
  ratioOff: number;
  /** Engine append p50 with and without verification, µs. */
  p50OnUs: number;
  p50OffUs: number;
}

/** Rows that ran both ways: what CRC-32C and record-framing validation cost in throughput and latency. */
export function verifyCosts(rows: BenchRow[]): VerifyCost[] {
  const out: VerifyCost[] = [];
  for (const off of rows) {
    if (off.verify !== false || off.error) continue;
    const on = rows.find((r) => r.verify !== false && !r.error && r.mode === off.mode && r.flush === off.flush && r.batchBytes === off.batchBytes);
    if (!on) continue;
    out.push({ row: rowLabel(on), ratioOn: on.ratio, ratioOff: off.ratio, p50OnUs: on.p50Us, p50OffUs: off.p50Us });
  }
  return out;
}

export interface OrderEffect {
  row: string;
  /** Median engine/baseline ratio of the repetitions that ran the engine first, and the baseline first. */
  engineFirst: number;
  baselineFirst: number;
  /** The row's ratio (orderBalancedRatio). */
  balanced: number;
}

/**
 * Rows whose two orders disagree by more than `threshold` (relative): there a run right after
 * the other side's run measured differently, which the order-balanced ratio cancels and a
 * plain median of single ratios would not.
 */
export function orderEffects(rows: BenchRow[], threshold = 0.1): OrderEffect[] {
  const out: OrderEffect[] = [];
  for (const r of rows) {
    if (r.error) continue;
    const of = (order: string) => median(r.reps.filter((x) => x.order === order).map((x) => x.engine.mbps / x.baseline.mbps));
    const e = of('engine-first');
    const b = of('baseline-first');
    if (e === null || b === null || Math.abs(e - b) / Math.min(e, b) <= threshold) continue;
    out.push({ row: rowLabel(r), engineFirst: Math.round(e * 1000) / 1000, baselineFirst: Math.round(b * 1000) / 1000, balanced: r.ratio });
  }
  return out;
}
