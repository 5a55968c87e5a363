// What the load and the device did while a lasting fault was in force (a pause, a partition, a
// slow link): the seconds that overlap the schedule's first lasting entry, from its start to one
// second after its heal (answers held through it complete then). From them, per trial: the
// producers' worst per-second p99, and the device's mean utilisation (seed 004: a follower that
// holds acks=all leaves the disk idle). The cell's figure is the band over its trials
// (harness/results/figures.ts faultP99Us, faultUtilPct).
import type { SecondPoint } from '../drivers/types.ts';
import type { ScheduleEntryOutcome } from '../results/types.ts';

interface FaultWindow {
  measureStartMs: number;
  schedule: readonly ScheduleEntryOutcome[];
  loadStartMs: number;
}

/** The points (t: seconds of the measured window) whose second overlaps the first lasting entry, to a second after its heal. */
export function secondsDuringFault<P extends { t: number }>(points: readonly P[], o: FaultWindow): P[] | undefined {
  const e = o.schedule.find((x) => x.startMs !== null && typeof x.healMs === 'number');
  if (!e) return undefined;
  const from = o.loadStartMs + e.startMs!;
  const to = o.loadStartMs + (e.healMs as number) + 1000;
  return points.filter((p) => o.measureStartMs + (p.t + 1) * 1000 > from && o.measureStartMs + p.t * 1000 < to);
}

export function p99DuringFault(o: FaultWindow & { series: readonly SecondPoint[] }): number | undefined {
  const inside = secondsDuringFault(o.series, o)?.filter((p) => p.p99Us !== null);
  return inside?.length ? Math.max(...inside.map((p) => p.p99Us!)) : undefined;
}

/** The device's mean utilisation (iostat %util) over the same seconds; undefined where it was not sampled. */
export function utilDuringFault(o: FaultWindow & { points: ReadonlyArray<{ t: number; utilPct?: number }> }): number | undefined {
  const inside = secondsDuringFault(o.points, o)?.filter((p) => typeof p.utilPct === 'number');
  return inside?.length ? inside.reduce((s, p) => s + p.utilPct!, 0) / inside.length : undefined;
}
