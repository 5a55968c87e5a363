// What each system did about a bad block (the file faults: corrupt-file, truncate-file,
// lost-write), trial by trial, in CORDS's terms (Ganesan et al., FAST '17): lost acknowledged
// records, served corrupt, unavailable, crashed, replicas left diverged, nothing noticed (the bad
// bytes are still where the fault put them and the check found nothing), repaired (the system
// rewrote, cut off or dropped the bad range and lost nothing). From run.json alone: the ledger's
// figures, the replica comparison and each change read back after the check (fileFault.afterCheck).
import type { CellResult, RunResult, Trial } from './types.ts';
import { cellTargetName } from './cell-target.ts';

/** Worst first: a trial's outcome is the first that applies. */
export const FILE_FAULT_OUTCOMES = ['lost', 'served corrupt', 'unavailable', 'crashed', 'replicas diverged', 'nothing noticed', 'handled', 'repaired', 'never read', 'did not fire'] as const;
export type FileFaultOutcome = (typeof FILE_FAULT_OUTCOMES)[number];

/** One trial's outcome, or null when its fault is not a file fault. */
export function trialFileOutcome(t: Trial): FileFaultOutcome | null {
  const ff = t.fault?.fileFault;
  if (!ff) return null;
  const reads = ff.readErrors ?? [];
  if (ff.changes.length === 0 && reads.length === 0) return 'did not fire';
  if (t.ledger.ackedLost > 0) return 'lost';
  if (t.ledger.corrupt > 0) return 'served corrupt';
  if ((t.ledger.replicasDiverged ?? 0) > 0) return 'replicas diverged';
  // Read errors change no byte: their reads failed and nothing above shows, or nothing read them.
  if (reads.length) return Object.values(ff.readHits ?? {}).some((n) => n > 0) ? 'handled' : 'never read';
  const after = ff.afterCheck ?? [];
  if (after.some((a) => a.state === 'as-changed')) return 'nothing noticed';
  return after.length ? 'repaired' : 'nothing noticed';
}

export interface FileFaultRow {
  cell: string;
  system: string;
  /** The cell's fault schedule's name (its `faults` setting), or the kind. */
  schedule: string;
  kind: string;
  files: string;
  /** Outcome of each trial (unavailable and crashed ones included), in order. */
  outcomes: FileFaultOutcome[];
  /** The worst outcome over the trials. */
  worst: FileFaultOutcome;
  /** Acknowledged records lost over the trials, and acknowledged in all. */
  lost: number;
  acked: number;
  /** A failed cell: what its note says. */
  detail?: string;
}

function worstOf(outcomes: readonly FileFaultOutcome[]): FileFaultOutcome {
  return FILE_FAULT_OUTCOMES.find((o) => outcomes.includes(o)) ?? 'did not fire';
}

function rowOf(run: RunResult, c: CellResult): FileFaultRow | null {
  const trials = (c.trials ?? []).filter((t) => !t.replacedBy || t.ledger.ackedLost > 0);
  const file = trials.find((t) => t.fault?.fileFault);
  // A cell that failed in the recovery or check after its fault (a broker that could not be restarted): crashed.
  const failed = c.status === 'failed';
  const crashed = failed && /after the fault/.test(c.note ?? '');
  if (!file && !failed && !(c.unavailableTrials ?? []).length) return null;
  const ff = file?.fault?.fileFault;
  const outcomes: FileFaultOutcome[] = [
    ...trials.flatMap((t) => trialFileOutcome(t) ?? []),
    ...(c.unavailableTrials ?? []).map((): FileFaultOutcome => 'unavailable'),
    ...(crashed ? (['crashed'] as const) : []),
  ];
  return {
    cell: c.id,
    system: cellTargetName(run, c),
    schedule: typeof c.params.faults === 'string' ? c.params.faults : (file?.fault?.kind ?? '-'),
    kind: file?.fault?.kind ?? '-',
    files: ff?.files ?? '-',
    outcomes,
    worst: worstOf(outcomes),
    lost: trials.reduce((a, t) => a + t.ledger.ackedLost, 0),
    acked: trials.reduce((a, t) => a + t.ledger.acked, 0),
    ...(failed && c.note ? { detail: c.note.slice(0, 300) } : {}),
  };
}

/** A row per cell that ran a file fault (or failed under one); none for runs without them. */
export function fileFaultRows(run: RunResult): FileFaultRow[] {
  const anyFile = run.cells.some((c) => (c.trials ?? []).some((t) => t.fault?.fileFault));
  if (!anyFile) return [];
  return run.cells.flatMap((c) => rowOf(run, c) ?? []);
}

export const FILE_FAULT_HEADERS = ['cell', 'system', 'schedule', 'files', 'outcome (worst)', 'trials', 'lost / acked'] as const;

export function fileFaultCells(r: FileFaultRow): string[] {
  const counts = FILE_FAULT_OUTCOMES.filter((o) => r.outcomes.includes(o)).map((o) => `${r.outcomes.filter((x) => x === o).length} ${o}`);
  return [r.cell, r.system, r.schedule, r.files, r.worst, counts.join(', '), `${r.lost.toLocaleString('en-US')} / ${r.acked.toLocaleString('en-US')}`];
}

export const FILE_FAULT_CAPTION =
  "What each system did about the bad bytes, per trial, worst first: lost (acknowledged records gone), served corrupt, unavailable (the cluster did not come back), crashed (a broker could not be restarted), replicas diverged (a replica's bytes below the HW differ or cannot be read), nothing noticed (the bad bytes are still where the fault put them and the check found nothing), handled (reads of the failing blocks failed, and nothing above followed), repaired (the system rewrote, cut off or dropped the bad bytes and lost nothing), never read (no read touched the failing blocks)";
