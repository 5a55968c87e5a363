// The durability/cost frontier of a run whose matrix has `measure: [throughput, loss]`: each
// setting (the cell's params without measure, target and a driver the target fixes) is a point with the records/s of its
// throughput cell and the acknowledged records lost per cut of its loss cell (median, with the
// min-max over trials). The Pareto front holds the settings no other setting beats on both
// (as fast or faster, losing no more in its worst trial). One sentence answers the operator:
// the fastest setting that lost nothing in any trial, and what each faster one lost.
import type { CellResult, RunResult } from '../results/types.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { median } from '../../engine/common/stats.ts';
import { cellFigure, judgedTrials } from '../compare/figures.ts';
import { fmtInt } from './format.ts';

export interface FrontierPoint {
  /** The setting, as `flush=never,acks=1` (the cells' params without measure and target). */
  setting: string;
  target: string;
  recordsPerSec: { min: number; median: number; max: number; n: number };
  lost: { min: number; median: number; max: number; trials: number };
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
}

function settingKey(c: CellResult, omit: ReadonlySet<string>): string {
  const parts = Object.entries(c.params)
    .filter(([k]) => !omit.has(k))
    .map(([k, v]) => `${k}=${String(v)}`);
  return parts.join(',') || 'base';
}

const targetOf = (run: RunResult, c: CellResult): string => cellTargetName(run, c);

/**
 * The params a setting is named without: measure and target always; driver too when the run
 * pairs each target with one driver (a target axis whose systems speak different protocols: the
 * driver then says nothing the target does not).
 */
function omittedParams(run: RunResult): Set<string> {
  const omit = new Set(['measure', 'target']);
  const driversOf = new Map<string, Set<string>>();
  for (const c of run.cells) {
    if (c.params.driver === undefined) continue;
    const t = targetOf(run, c);
    if (!driversOf.has(t)) driversOf.set(t, new Set());
    driversOf.get(t)!.add(String(c.params.driver));
  }
  if (driversOf.size > 0 && [...driversOf.values()].every((d) => d.size === 1)) omit.add('driver');
  return omit;
}

/** One frontier per target, or [] when the run has no measure axis with both values. */
export function frontiersOf(run: RunResult): Frontier[] {
  const ok = (c: CellResult) => c.status === 'ok' || c.status === 'interrupted';
  const perf = run.cells.filter((c) => c.params.measure === 'throughput' && ok(c));
  const loss = run.cells.filter((c) => c.params.measure === 'loss' && ok(c));
  if (perf.length === 0 || loss.length === 0) return [];
  const omit = omittedParams(run);
  const keyOf = (c: CellResult) => settingKey(c, omit);
  const byTarget = new Map<string, FrontierPoint[]>();
  for (const p of perf) {
    const target = targetOf(run, p);
    const key = keyOf(p);
    const l = loss.find((c) => targetOf(run, c) === target && keyOf(c) === key);
    if (!l) continue;
    const rps = cellFigure(p, 'recordsPerSec');
    const trials = judgedTrials(l);
    if (!rps || trials.length === 0) continue;
    const lost = trials.map((t) => t.ledger.ackedLost);
    const point: FrontierPoint = {
      setting: key,
      target,
      recordsPerSec: { min: rps.min, median: rps.median, max: rps.max, n: rps.n },
      lost: { min: Math.min(...lost), median: median(lost) ?? 0, max: Math.max(...lost), trials: lost.length },
      acked: median(trials.map((t) => t.ledger.acked)) ?? 0,
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
    return { target, points, answer: answerOf(target, points) };
  });
}

function answerOf(target: string, points: FrontierPoint[]): string {
  const rate = (p: FrontierPoint) => `${fmtInt(p.recordsPerSec.median)} records/s`;
  const safe = points.filter((p) => p.lost.max === 0);
  if (safe.length === 0) return `On ${target}, every setting lost acknowledged records in some trial; the least: ${least(points)}.`;
  const best = safe[0]!;
  const faster = points.filter((p) => p.recordsPerSec.median > best.recordsPerSec.median);
  const lostText = (p: FrontierPoint) => `${p.setting} (${rate(p)}) lost ${fmtInt(p.lost.min)} / ${fmtInt(p.lost.median)} / ${fmtInt(p.lost.max)} per cut`;
  return (
    `On ${target}, the fastest setting that lost nothing in any trial is ${best.setting} at ${rate(best)} (${best.lost.trials} trial${best.lost.trials === 1 ? '' : 's'})` +
    (faster.length ? `; faster ones lost (min / median / max): ${faster.map(lostText).join('; ')}.` : '; no setting was faster.')
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
