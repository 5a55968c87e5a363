// The producers' p99 while a lasting fault was in force (a pause, a partition, a slow link): the
// worst per-second p99 of the load's seconds that overlap the schedule's first lasting entry,
// from its start to one second after its heal (answers held through it complete then). Per
// trial, from that trial's own seconds; the cell's figure is the band over its trials
// (harness/compare/figures.ts faultP99Us).
import type { SecondPoint } from '../drivers/types.ts';
import type { ScheduleEntryOutcome } from '../results/types.ts';

export function p99DuringFault(o: { series: readonly SecondPoint[]; measureStartMs: number; schedule: readonly ScheduleEntryOutcome[]; loadStartMs: number }): number | undefined {
  const e = o.schedule.find((x) => x.startMs !== null && typeof x.healMs === 'number');
  if (!e) return undefined;
  const from = o.loadStartMs + e.startMs!;
  const to = o.loadStartMs + (e.healMs as number) + 1000;
  const inside = o.series.filter((p) => p.p99Us !== null && o.measureStartMs + (p.t + 1) * 1000 > from && o.measureStartMs + p.t * 1000 < to);
  return inside.length ? Math.max(...inside.map((p) => p.p99Us!)) : undefined;
}
