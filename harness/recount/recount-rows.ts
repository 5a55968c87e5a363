// The recount's figures as table rows, one per trial, for the terminal (cli/trial-summary.ts),
// the report (report/loss-section.ts) and `durolab recount` alike.
import type { RecountFigures, RunResult } from '../results/types.ts';
import { notServedWhere } from './recount.ts';

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
