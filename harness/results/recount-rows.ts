// The recount's figures as table rows, one per trial, for the terminal (report/trial-summary.ts),
// the report (report/loss-section.ts) and `durolab recount` alike.
import type { RecountFigures, RunResult } from './types.ts';

export interface RecountRow {
  cell: string;
  /** 0-based, as run.json's trials[].index. */
  trial: number;
  target: string;
  figures?: RecountFigures;
  problem?: string;
}

export const RECOUNT_HEADERS = ['cell', 'trial', 'target', 'acked', 'served', 'check served', 'on a disk, not served', 'on no disk', 'corrupt / torn'] as const;

/** Explains the columns, for a caption or a line above the table. */
export const RECOUNT_CAPTION =
  "where every acknowledged record was, from the kept disk images alone (durolab recount RUN): served = in a final image (the recovered cluster's disks after its clean stop); " +
  "on a disk, not served = on some broker's cut image but thrown away by the system's own recovery or leader election; on no disk = never made durable. " +
  "served must equal the check's (acked - lost): a difference is a finding";

const n = (x: number) => x.toLocaleString('en-US');

/** The cells of one row, in RECOUNT_HEADERS' order. */
export function recountCells(r: RecountRow): string[] {
  const f = r.figures;
  if (!f) return [r.cell, String(r.trial + 1), r.target, 'cannot recount', '-', '-', '-', '-', r.problem ?? ''];
  return [
    r.cell,
    String(r.trial + 1),
    r.target,
    n(f.acked),
    n(f.served),
    n(f.checkServed) + (f.served === f.checkServed ? '' : ' DIFFERS'),
    n(f.onDiskNotServed) + notServedWhere(f),
    n(f.onNoDisk),
    `${f.corruptBatches} / ${f.tornTails}`,
  ];
}

/** The trials of a run that were re-counted after their check (Trial.recount). */
export function recountRowsOf(run: RunResult): RecountRow[] {
  return run.cells.flatMap((c) =>
    (c.trials ?? []).flatMap((t) => {
      if (!t.recount) return [];
      const row: RecountRow = { cell: c.id, trial: t.index, target: c.target ?? run.target };
      return ['problem' in t.recount ? { ...row, problem: t.recount.problem } : { ...row, figures: t.recount }];
    }),
  );
}

/** One line of figures: the three classes, and whether the served count agrees with the check's. */
export function recountLine(f: RecountFigures): string {
  const agree = f.served === f.checkServed ? 'agrees with the check' : `DIFFERS from the check's ${n(f.checkServed)} (a finding: one reader is wrong)`;
  return (
    `recount from ${f.images} disk image(s): acknowledged ${n(f.acked)}, served ${n(f.served)} (${agree}), ` +
    `on a disk but not served ${n(f.onDiskNotServed)}${notServedWhere(f)}, on no disk ${n(f.onNoDisk)}` +
    (f.corruptBatches ? `, ${n(f.corruptBatches)} corrupt batches on the images` : '') +
    (f.tornTails ? `, ${f.tornTails} torn segment tail(s)` : '')
  );
}

/** " (on broker 1's cut disk 960)": where the records a recovery threw away had been. */
export function notServedWhere(f: RecountFigures): string {
  const by = Object.entries(f.notServedOnBroker ?? {});
  return by.length ? ` (${by.map(([id, count]) => `${n(count)} on broker ${id}'s cut disk`).join(', ')})` : '';
}
