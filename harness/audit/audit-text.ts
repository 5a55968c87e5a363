// One line per piece of lab evidence, as `durolab audit` prints it.
import { fmtInt, fmtRate } from '../report/format.ts';
import type { Evidence } from './lab-evidence.ts';

export function faultText(f: { kind: string; target: string }): string {
  const who = f.target === 'all' ? 'every broker at once' : f.target === 'leader' ? 'the leader' : f.target;
  switch (f.kind) {
    case 'power-cut':
      return `power cut of ${who}`;
    case 'process-kill':
      return `SIGKILL of ${who}`;
    case 'crash-states':
      return `crash states of ${who}'s disk`;
    case 'move-leader':
      return `planned leader move (${f.target})`;
    default:
      return `${f.kind} (${f.target})`;
  }
}

export function evidenceText(e: Evidence): string {
  const where = `${e.scenario} ${e.runId}, cell ${e.cell} on ${e.system}`;
  const differs = e.differs.length ? ` [${e.differs.join(', ')}]` : '';
  if (e.lost) {
    const l = e.lost;
    const of = e.acked !== null ? ` of ~${fmtInt(e.acked)} acknowledged` : '';
    const spread = l.count > 1 ? `${fmtInt(l.min)} / ${fmtInt(l.median)} / ${fmtInt(l.max)} (min / median / max over ${l.count} ${l.unit}s)` : `${fmtInt(l.max)} (1 ${l.unit})`;
    return `${faultText(e.fault ?? { kind: 'fault', target: '?' })}: lost ${spread}${of}; ${where}${differs}`;
  }
  return `${fmtRate(e.recordsPerSec ?? 0)} records/s; ${where}${differs}`;
}
