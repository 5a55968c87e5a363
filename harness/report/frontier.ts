// The durability/cost frontier of a run whose matrix has `measure: [throughput, loss]`: each
// setting (the cell's params without measure, target and a driver the target fixes) is a point with the records/s of its
// throughput cell and the acknowledged records lost per cut of its loss cell (median, with the
// min-max over trials). The Pareto front holds the settings no other setting beats on both
// (as fast or faster, losing no more in its worst trial). One sentence answers the operator:
// the fastest setting that lost nothing in any trial, and what each faster one lost.
import type { CellResult, RunResult } from '../results/types.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { omittedParams, settingKey } from '../results/cell-setting.ts';
import { median } from '../../engine/common/stats.ts';
import { cellFigure, judgedTrials, unavailableCount } from '../results/figures.ts';
import { fmtInt } from './format.ts';

export interface FrontierPoint {
  /** The setting, as `flush=never,acks=1` (the cells' params without measure and target). */
  setting: string;
  target: string;
  recordsPerSec: { min: number; median: number; max: number; n: number };
  lost: { min: number; median: number; max: number; trials: number };
  /** Cuts of its loss cell after which the cluster did not come back (not checked): the setting cannot count as losing nothing. */
  unavailable: number;
  /** Acknowledged per trial (median), what `lost` is out of. */
  acked: number;
  throughputCell: string;
  lossCell: string;
  onFront: boolean;
  /** The throughput cell's windows were still ramping (steady-state check). */
  notSteady: boolean;
}

export interface Frontier {
  target: string;
  points: FrontierPoint[];
  /** The answer in one sentence. */
  answer: string;
  /** Settings whose every cut left the cluster unavailable: no loss to plot, named in the answer. */
  unavailableOnly: Array<{ setting: string; trials: number }>;
}

const targetOf = (run: RunResult, c: CellResult): string => cellTargetName(run, c);

/** One frontier per target, or [] when the run has no measure axis with both values. */
export function frontiersOf(run: RunResult): Frontier[] {
  const ok = (c: CellResult) => c.status === 'ok' || c.status === 'interrupted';
  const perf = run.cells.filter((c) => c.params.measure === 'throughput' && ok(c));
  const loss = run.cells.filter((c) => c.params.measure === 'loss' && ok(c));
  if (perf.length === 0 || loss.length === 0) return [];
  const omit = omittedParams(run, ['measure']);
  const keyOf = (c: CellResult) => settingKey(c, omit);
  const byTarget = new Map<string, FrontierPoint[]>();
  const unavailableOnly = new Map<string, Array<{ setting: string; trials: number }>>();
  for (const p of perf) {
    const target = targetOf(run, p);
    const key = keyOf(p);
    const l = loss.find((c) => targetOf(run, c) === target && keyOf(c) === key);
    if (!l) continue;
    const rps = cellFigure(p, 'recordsPerSec');
    const trials = judgedTrials(l);
    if (trials.length === 0 && unavailableCount(l) > 0) {
      unavailableOnly.set(target, [...(unavailableOnly.get(target) ?? []), { setting: key, trials: unavailableCount(l) }]);
      if (!byTarget.has(target)) byTarget.set(target, []);
    }
    if (!rps || trials.length === 0) continue;
    const lost = trials.map((t) => t.ledger.ackedLost);
    const point: FrontierPoint = {
      setting: key,
      target,
      recordsPerSec: { min: rps.min, median: rps.median, max: rps.max, n: rps.n },
      lost: { min: Math.min(...lost), median: median(lost) ?? 0, max: Math.max(...lost), trials: lost.length },
      acked: median(trials.map((t) => t.ledger.acked)) ?? 0,
      unavailable: unavailableCount(l),
      throughputCell: p.id,
      lossCell: l.id,
      onFront: false,
      notSteady: p.steadiness?.state === 'ramping',
    };
    let list = byTarget.get(target);
    if (!list) byTarget.set(target, (list = []));
    list.push(point);
  }
  return [...byTarget].map(([target, points]) => {
    for (const p of points) {
      p.onFront = !points.some(
        (q) => q !== p && q.recordsPerSec.median >= p.recordsPerSec.median && q.lost.max <= p.lost.max && (q.recordsPerSec.median > p.recordsPerSec.median || q.lost.max < p.lost.max),
      );
    }
    points.sort((a, b) => b.recordsPerSec.median - a.recordsPerSec.median);
    const gone = unavailableOnly.get(target) ?? [];
    return { target, points, answer: answerOf(target, points, gone), unavailableOnly: gone };
  });
}

function answerOf(target: string, points: FrontierPoint[], unavailableOnly: ReadonlyArray<{ setting: string; trials: number }>): string {
  const rate = (p: FrontierPoint) => `${fmtInt(p.recordsPerSec.median)} records/s`;
  // A cut after which the cluster never came back was not checked: such a setting is not one that lost nothing.
  const gone = [
    ...points.filter((p) => p.unavailable > 0).map((p) => `${p.setting} (${p.unavailable} of ${p.unavailable + p.lost.trials} cuts)`),
    ...unavailableOnly.map((u) => `${u.setting} (every cut, ${u.trials})`),
  ];
  const goneText = gone.length ? ` After some cuts the cluster did not come back (not checked): ${gone.join('; ')}.` : '';
  const safe = points.filter((p) => p.lost.max === 0 && p.unavailable === 0);
  if (points.length === 0) return `On ${target}, no setting was checked after a cut.${goneText}`;
  if (safe.length === 0) {
    const head = points.every((p) => p.lost.max > 0) ? 'every setting lost acknowledged records in some trial' : 'no setting was checked after every cut without a loss';
    return `On ${target}, ${head}; the least: ${least(points)}.${goneText}`;
  }
  const best = safe[0]!;
  const faster = points.filter((p) => p.recordsPerSec.median > best.recordsPerSec.median);
  const lostText = (p: FrontierPoint) => `${p.setting} (${rate(p)}) lost ${fmtInt(p.lost.min)} / ${fmtInt(p.lost.median)} / ${fmtInt(p.lost.max)} per cut${p.unavailable ? `, ${p.unavailable} cut(s) not checked` : ''}`;
  return (
    `On ${target}, the fastest setting that lost nothing in any trial is ${best.setting} at ${rate(best)} (${best.lost.trials} trial${best.lost.trials === 1 ? '' : 's'})` +
    (faster.length ? `; faster ones lost (min / median / max): ${faster.map(lostText).join('; ')}.` : '; no setting was faster.') +
    goneText
  );
}

function least(points: FrontierPoint[]): string {
  const p = [...points].sort((a, b) => a.lost.max - b.lost.max)[0]!;
  return `${p.setting}, at most ${fmtInt(p.lost.max)} per cut at ${fmtInt(p.recordsPerSec.median)} records/s`;
}

/** The frontier as the terminal prints it. */
export function frontierText(fs: Frontier[]): string {
  if (fs.length === 0) return '';
  const lines = ['durability/cost frontier (records/s of the throughput cell; acknowledged records lost per cut of the loss cell, min / median / max over its trials; * on the Pareto front):'];
  for (const f of fs) {
    lines.push(`  ${f.target}:`);
    for (const p of f.points) {
      lines.push(
        `    ${p.onFront ? '*' : ' '} ${p.setting.padEnd(40)} ${fmtInt(p.recordsPerSec.median).padStart(10)} records/s${p.notSteady ? ' (not steady)' : ''}   lost ${fmtInt(p.lost.min)} / ${fmtInt(p.lost.median)} / ${fmtInt(p.lost.max)} of ~${fmtInt(p.acked)}`,
      );
    }
    lines.push(`    ${f.answer}`);
  }
  return lines.join('\n');
}
