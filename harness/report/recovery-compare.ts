// Recovery side by side (scenarios/recovery-time*.yaml): per cell of a fault run, how big the log
// was, how many segments it had, the hit brokers' restart (exec or boot to serving) and the
// broker's own log-recovery figure, medians over the trials; and, where the matrix has a target
// axis, each target's restart against durolab's broker in the cell with the same other params.
// The terminal prints it (recoveryCompareSummary) and the report shows the same rows.
import { median } from '../../engine/common/stats.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import type { CellResult, RunResult, Trial } from '../results/types.ts';
import { cellSystem, labSystem } from '../targets/run-targets.ts';
import { omittedParams, settingKey } from '../results/cell-setting.ts';

export interface RecoveryCompareRow {
  cell: string;
  /** The system that ran the cell (durolab, kafka): results/cell-target.ts. */
  target: string;
  /** Trials whose fault fired and whose brokers came back (suspect ones left out). */
  trials: number;
  /** The log before the fault (the broker figures' bytes and segments, first repetition); null: not read (no broker answered, no file counted). */
  logBytes: number | null;
  segments: number | null;
  /** Median over the trials of the slowest hit broker's restart, ms. */
  restartMs: number | null;
  /** Median of the broker's own log-recovery time (durolab's RecoveryReport, Kafka's "Loaded N logs" figure), ms. */
  logRecoveryMs: number | null;
  /** restartMs over the same params' durolab cell (null for durolab itself or without one). */
  vsDurolab: number | null;
}


function restartOf(t: Trial): number | null {
  const f = t.fault;
  if (!f) return null;
  if (f.recoverySteps) return f.recoverySteps.restartMs;
  const ms = f.recovery.map((r) => r.restartMs).filter((v): v is number => typeof v === 'number');
  return ms.length ? Math.max(...ms) : null;
}

function logRecoveryOf(t: Trial): number | null {
  const ms = (t.fault?.recovery ?? []).map((r) => r.durationMs).filter((v): v is number => v !== undefined);
  return ms.length ? Math.max(...ms) : null;
}

const nonNull = (xs: Array<number | null>): number[] => xs.filter((x): x is number => x !== null);

/** One row per cell whose trials timed a broker's restart after a fault (a kill or a power cut); [] otherwise. */
export function recoveryCompareRows(run: RunResult): RecoveryCompareRow[] {
  const cells = run.cells.filter((c) => c.status !== 'skipped' && (c.trials ?? []).some((t) => restartOf(t) !== null));
  const omit = omittedParams(run);
  const groupOf = (c: CellResult) => settingKey(c, omit);
  const rows = cells.map((c): RecoveryCompareRow => {
    const ts = (c.trials ?? []).filter((t) => t.fault && !t.suspect && t.fault.recovery.length > 0);
    return {
      cell: c.id,
      target: cellSystem(run, c),
      trials: ts.length,
      logBytes: c.broker.bytes ?? null,
      segments: c.broker.segments ?? null,
      restartMs: median(nonNull(ts.map(restartOf))),
      logRecoveryMs: median(nonNull(ts.map(logRecoveryOf))),
      vsDurolab: null,
    };
  });
  const lab = labSystem();
  for (const [i, r] of rows.entries()) {
    if (r.target === lab || r.restartMs === null) continue;
    const base = rows.find((x, j) => x.target === lab && groupOf(cells[j]!) === groupOf(cells[i]!));
    if (base?.restartMs) r.vsDurolab = r.restartMs / base.restartMs;
  }
  return rows;
}

const sec = (ms: number | null) => (ms === null ? '-' : (ms / 1000).toFixed(2));

/** The terminal's table; '' when no cell restarted a broker after a fault. */
export function recoveryCompareSummary(run: RunResult): string {
  const rows = recoveryCompareRows(run);
  if (rows.length === 0) return '';
  const ratios = rows.some((r) => r.vsDurolab !== null);
  const body = rows.map((r) => [
    r.cell,
    String(r.trials),
    r.logBytes === null ? '-' : (r.logBytes / 2 ** 20).toFixed(0),
    r.segments === null ? '-' : String(r.segments),
    sec(r.restartMs),
    sec(r.logRecoveryMs),
    ...(ratios ? [r.vsDurolab === null ? '-' : `${r.vsDurolab.toFixed(2)}x`] : []),
  ]);
  return [
    "recovery (medians over the trials; restart = the hit brokers' exec or boot to serving, log recovery = the broker's own figure; log before the fault):",
    renderTable(['cell', 'trials', 'log MiB', 'segments', 'restart s', 'log recovery s', ...(ratios ? [`restart / ${labSystem()}'s`] : [])], body, (i) => i > 0),
  ].join('\n');
}
