// records/s of each system against the lab's own broker under the same settings, for runs with a
// target axis (peer3-power-cut-all: durolab, Kafka and NATS under one load shape): each cell's
// median records/s over the same setting's cell on durolab's broker (cell-setting.ts pairs them).
import { renderTable } from '../../engine/common/text-table.ts';
import type { CellResult, RunResult } from '../results/types.ts';
import { cellSystem, labSystem } from '../targets/run-targets.ts';
import { omittedParams, settingKey } from '../results/cell-setting.ts';

export interface ThroughputVsLabRow {
  cell: string;
  system: string;
  /** null: no repetition finished its load (not measured). */
  recordsPerSec: number | null;
  /** Over the lab's cell of the same setting; null for the lab's own cells, without a partner, or where either was not measured. */
  vsLab: number | null;
}

const measured = (c: CellResult) => c.status === 'ok' || c.status === 'interrupted';

/** [] unless the run ran the lab's system and another one (a frontier's measure axis has its own answer: report/frontier.ts). */
export function throughputVsLabRows(run: RunResult): ThroughputVsLabRow[] {
  const cells = run.cells.filter(measured);
  if (cells.some((c) => c.params.measure !== undefined)) return [];
  const lab = labSystem();
  const systems = new Set(cells.map((c) => cellSystem(run, c)));
  if (!systems.has(lab) || systems.size < 2) return [];
  const omit = omittedParams(run);
  return cells.map((c) => {
    const system = cellSystem(run, c);
    const base = system === lab ? undefined : cells.find((x) => cellSystem(run, x) === lab && settingKey(x, omit) === settingKey(c, omit));
    const rps = c.throughput?.recordsPerSec ?? null;
    const baseRps = base?.throughput?.recordsPerSec;
    return { cell: c.id, system, recordsPerSec: rps, vsLab: rps !== null && baseRps !== undefined && baseRps > 0 ? rps / baseRps : null };
  });
}

/** The terminal's table; '' when the run compares no system with the lab's. */
export function throughputVsLabSummary(run: RunResult): string {
  const rows = throughputVsLabRows(run);
  if (rows.length === 0) return '';
  const body = rows.map((r) => [r.cell, r.system, r.recordsPerSec === null ? '-' : Math.round(r.recordsPerSec).toLocaleString('en-US'), r.vsLab === null ? '-' : `${r.vsLab.toFixed(2)}x`]);
  return [
    `records/s against ${labSystem()}'s broker under the same settings (medians over the repetitions; a fault run's windows end at its fault):`,
    renderTable(['cell', 'system', 'records/s', `/ ${labSystem()}'s`], body, (i) => i > 1),
  ].join('\n');
}
