// The terminal's fault section at the end of a bench: per cell, the distribution over trials of
// acknowledged-but-lost records and of the loss window, and how long one trial cycle took.
import { distribution, type Distribution } from '../../engine/common/stats.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import type { CellResult, RunResult, Trial } from '../results/types.ts';
import { cycleBreakdowns } from '../results/cycle-goals.ts';
import { TRIAL_STEPS } from '../results/trial-steps.ts';
import { faultDiskOfTarget } from '../targets/run-targets.ts';
import { beyondPredictionText } from '../checker/loss-prediction.ts';
import { unavailableLine } from '../results/unavailable-text.ts';
import { RECOUNT_CAPTION, RECOUNT_HEADERS, recountCells, recountRowsOf } from '../results/recount-rows.ts';

export interface CellTrialStats {
  cell: string;
  trials: number;
  faulted: number;
  suspect: number;
  /** Attempts that could not be judged and were run again (Trial.replacedBy). */
  replaced: number;
  /** Fault trials whose cluster did not come back (CellResult.unavailableTrials): not checked, not in the loss figures. */
  unavailable: number;
  ackedLost: Distribution | null;
  /** Over trials that lost something (a trial without loss has no window). */
  lossWindowSec: Distribution | null;
  cycleSec: Distribution | null;
  recoverSec: Distribution | null;
  perTrialLost: number[];
}

function cellTrialStats(c: CellResult): CellTrialStats {
  const trials: Trial[] = c.trials ?? [];
  return {
    cell: c.id,
    trials: trials.length,
    faulted: trials.filter((t) => t.fault).length,
    suspect: trials.filter((t) => t.suspect).length,
    replaced: trials.filter((t) => t.replacedBy !== undefined).length,
    unavailable: c.unavailableTrials?.length ?? 0,
    ackedLost: distribution(trials.map((t) => t.ledger.ackedLost)),
    lossWindowSec: distribution(trials.map((t) => t.fault?.lossWindowSec).filter((v): v is number => typeof v === 'number')),
    cycleSec: distribution(trials.map((t) => t.cycleMs).filter((v): v is number => typeof v === 'number').map((ms) => ms / 1000)),
    recoverSec: distribution(trials.map((t) => t.fault?.recoverMs).filter((v): v is number => typeof v === 'number').map((ms) => ms / 1000)),
    perTrialLost: trials.map((t) => t.ledger.ackedLost),
  };
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const sec = (n: number) => n.toFixed(n < 10 ? 2 : 1);

function dist(d: Distribution | null, f: (n: number) => string): string {
  return d ? `${f(d.min)} / ${f(d.median)} / ${f(d.max)}` : '-';
}

/** '' when no cell of the run had a fault. */
export function trialSummary(run: RunResult): string {
  const stats = run.cells.filter((c) => (c.trials ?? []).some((t) => t.fault || t.suspect) || c.unavailableTrials?.length).map(cellTrialStats);
  if (stats.length === 0) return '';
  const headers = ['cell', 'trials', 'acked lost min/med/max', 'lost per trial', 'loss window s min/med/max', 'recovery s med', 'trial cycle s min/med/max', 'suspect', 'unavailable'];
  const rows = stats.map((s) => [
    s.cell,
    s.replaced ? `${s.trials} (${s.replaced} replaced)` : String(s.trials),
    dist(s.ackedLost, int),
    s.perTrialLost.map(int).join(', '),
    dist(s.lossWindowSec, sec),
    s.recoverSec ? sec(s.recoverSec.median) : '-',
    dist(s.cycleSec, sec),
    String(s.suspect),
    String(s.unavailable),
  ]);
  const out = [
    'faults (per cell over its checked trials; acked lost = acknowledged records missing after recovery; unavailable = trials whose cluster did not come back, not checked):',
    renderTable(headers, rows, (i) => i > 0 && i !== 3),
  ];
  const unavailable = run.cells.flatMap((c) => (c.unavailableTrials ?? []).map((u) => `  ${c.id} trial ${u.index + 1}: ${unavailableLine(u)}`));
  if (unavailable.length) out.push('unavailable after the fault (a finding of the system; expectations on ledger figures are NOT EVALUATED for these trials):', ...unavailable);
  const predicted = predictionSummary(run);
  if (predicted) out.push(predicted);
  const recounted = recountRowsOf(run);
  if (recounted.length) {
    out.push(`recount (${RECOUNT_CAPTION}):`, renderTable(RECOUNT_HEADERS, recounted.map(recountCells), (i) => i >= 3 && i < RECOUNT_HEADERS.length - 1));
    for (const r of recounted) if (r.problem) out.push(`  ${r.cell} trial ${r.trial + 1}: cannot recount: ${r.problem}`);
  }
  const evidence = run.cells.flatMap((c) => (c.trials ?? []).filter((t) => t.evidence?.incomplete).map((t) => `  ${c.id} trial ${t.index + 1}: EVIDENCE INCOMPLETE: ${t.evidence!.incomplete!.join('; ')}`));
  if (evidence.length) out.push('kept disk images:', ...evidence);
  const counted = countedApart(run);
  if (counted) out.push(counted);
  // Numbered from 1 as their rep-N directories (trial N = rep-N); a note on a trial that is not suspect is a remark, not a doubt.
  const noted = (suspect: boolean) =>
    run.cells.flatMap((c) =>
      (c.trials ?? []).filter((t) => t.note && Boolean(t.suspect) === suspect).map((t) => `  ${c.id} trial ${t.index + 1}: ${t.note}${t.replacedBy !== undefined ? ` (replaced by trial ${t.replacedBy + 1})` : ''}`),
    );
  const [suspects, remarks] = [noted(true), noted(false)];
  if (suspects.length) out.push('suspect trials (numbered as their rep-N directories):', ...suspects);
  if (remarks.length) out.push('notes on trials (what the restart had to do; numbered as their rep-N directories):', ...remarks);
  const integrity = run.cells.flatMap((c) => {
    const l = c.ledger;
    const bad = [
      l.corrupt ? `${l.corrupt} corrupt batches served` : '',
      l.replicasDisagree ? `replicas disagree below HW in ${l.replicasDisagree} partition-trials` : '',
      l.replicasDiverged ? `replica bytes diverge in ${l.replicasDiverged} partition-trials (first at offset ${c.replicas?.firstDivergentOffset ?? '?'})` : '',
      l.hwWentBack ? `HW went back by ${l.hwWentBack} offsets` : '',
      l.offsetChanged ? `${l.offsetChanged} acknowledged records served at another offset` : '',
      l.inconsistentOffsets ? `${l.inconsistentOffsets} inconsistent offsets (two records at one offset, or an acknowledged offset holding another record)` : '',
    ].filter(Boolean);
    return bad.length ? [`  ${c.id}: ${bad.join('; ')}`] : [];
  });
  const cycle = cycleSummary(run);
  if (cycle) out.push(cycle);
  if (integrity.length) out.push('checker flags (must be 0 for a durable setup; when every replica loses acknowledged records, the HW goes back with them):', ...integrity);
  return out.join('\n');
}

/**
 * What the checker counted apart, per cell with fault trials: records acknowledged without an
 * offset (counted in acked, they must survive), and trials whose HW going back was not measured
 * (their hwWentBack is absent, not 0); '' when there is neither.
 */
export function countedApart(run: RunResult): string {
  const lines = run.cells
    .filter((c) => (c.trials ?? []).some((t) => t.fault))
    .flatMap((c) => {
      const trials = (c.trials ?? []).filter((t) => t.fault);
      const withoutOffset = trials.map((t) => t.ledger.ackedWithoutOffset ?? 0);
      const unmeasured = trials.filter((t) => t.ledger.hwWentBack === undefined);
      return [
        withoutOffset.some((n) => n > 0) ? `  ${c.id}: ${int(withoutOffset.reduce((a, b) => a + b, 0))} acknowledged records without an offset (per trial ${withoutOffset.map(int).join(', ')}): counted in acked, found by their identity` : '',
        unmeasured.length
          ? `  ${c.id}: HW going back not measured in ${unmeasured.length} of ${trials.length} trials (${unmeasured.map((t) => `trial ${t.index + 1}: ${t.fault?.hwNotMeasuredWhy ?? 'no HW before the fault'}`).join('; ')})`
          : '',
      ].filter(Boolean);
    });
  return lines.length ? ['counted apart (acknowledged without an offset: a retry the broker found a duplicate of; HW figures not measured are left out, not 0):', ...lines].join('\n') : '';
}

/** Predicted vs measured loss per cell (trials with a prediction), and every trial that lost beyond it; '' without predictions. */
export function predictionSummary(run: RunResult): string {
  const cells = run.cells.map((c) => ({ c, trials: (c.trials ?? []).filter((t) => t.fault?.predicted) })).filter((x) => x.trials.length > 0);
  if (cells.length === 0) return '';
  const rows = cells.map(({ c, trials }) => [
    c.id,
    trials.map((t) => int(t.fault!.predicted!.atRisk)).join(', '),
    trials.map((t) => int(t.ledger.ackedLost)).join(', '),
    trials.map((t) => int(t.fault!.predicted!.beyond)).join(', '),
    trials[0]!.fault!.predicted!.rule,
  ]);
  const out = [
    'predicted vs measured (acknowledged records the settings allow the fault to lose, from the ledger before the check; lost beyond it = lost although a completed flush or a surviving replica covered it):',
    renderTable(['cell', 'at risk per trial', 'lost per trial', 'lost beyond', 'rule'], rows, (i) => i > 0 && i < 4),
  ];
  for (const { c, trials } of cells) {
    for (const t of trials) {
      const text = beyondPredictionText(t.fault!.predicted!);
      if (text) out.push(`  !! ${c.id} trial ${t.index + 1}: ${text}`);
    }
  }
  return out.join('\n');
}

/** The trial cycle step by step (median seconds per step over a cell's trials) beside its goal; '' without timed trials. */
export function cycleSummary(run: RunResult): string {
  const rows = cycleBreakdowns(run, faultDiskOfTarget);
  if (rows.length === 0) return '';
  const steps = TRIAL_STEPS.filter((s) => rows.some((r) => r.b.medianSteps[s.key] !== undefined));
  const headers = ['cell', ...steps.map((s) => s.label), 'cycle', 'goal', 'load avg'];
  const body = rows.map(({ cell, b }) => [
    cell,
    ...steps.map((s) => (b.medianSteps[s.key] === undefined ? '-' : (b.medianSteps[s.key]! / 1000).toFixed(1))),
    (b.medianTotalMs / 1000).toFixed(1),
    `${b.verdict.state.toUpperCase()}${b.verdict.goalMs !== null ? ` <= ${b.verdict.goalMs / 1000}` : ''}`,
    `${b.loadAvg1.min.toFixed(1)}-${b.loadAvg1.max.toFixed(1)}/${b.cores}`,
  ]);
  const why = rows.filter((r) => r.b.verdict.state !== 'pass').map((r) => `  ${r.cell}: ${r.b.verdict.reason}`);
  const cold = run.cells.flatMap((c) => (c.trials ?? []).flatMap((t) => (t.timing?.notResumed ?? []).map((n) => `  ${c.id} trial ${t.index + 1}: ${n}`)));
  return [
    'trial cycle step by step (median s over the trials; steps are contiguous, their medians need not add up to the cycle):',
    renderTable(headers, body, (i) => i > 0 && i < headers.length - 2),
    ...why,
    ...(cold.length ? ['VM starts that booted instead of resuming the saved guest:', ...cold] : []),
  ].join('\n');
}
