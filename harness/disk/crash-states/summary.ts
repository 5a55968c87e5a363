// The terminal's crash-states table at the end of a bench: per cell, how many states, the
// loss of acknowledged records over them (min / median / p99 / max), the fraction losing, the
// earliest losing point, and how many booted states agreed with the host check.
import { renderTable } from '../../../engine/common/text-table.ts';
import type { RunResult } from '../../results/types.ts';

/** '' when no cell explored crash states. */
export function crashStatesSummary(run: RunResult): string {
  const cells = run.cells.filter((c) => c.crashStates && c.crashStates.states > 0);
  if (cells.length === 0) return '';
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  const rows = cells.map((c) => {
    const s = c.crashStates!;
    return [
      c.id,
      int(s.states),
      `${int(s.lostMin)} / ${int(s.lostMedian)} / ${int(s.lostP99)} / ${int(s.lostMax)}`,
      `${(s.fractionLosing * 100).toFixed(1)} %`,
      s.earliestLosingAtMs === null ? '-' : `${(s.earliestLosingAtMs / 1000).toFixed(2)} s`,
      int(s.corruptStates),
      s.verification ? `${s.verification.agreed}/${s.verification.booted}` : '-',
    ];
  });
  return [
    `crash states (${cells[0]!.crashStates!.policy}; lost = acknowledged before the crash point, not served after recovery):`,
    renderTable(['cell', 'states', 'lost min/med/p99/max', 'states losing', 'earliest losing', 'corrupt states', 'booted agree'], rows, (i) => i > 0),
  ].join('\n');
}
