// Checks of a scenario's `faultSets:` (named fault schedules) against the cells that pick them
// with the `faults` setting: every schedule is checked as `faults:` is (fault-checks.ts, under its
// own path), every name a cell gives is an entry, and every entry is run by some cell.
import type { ScenarioIssue } from './errors.ts';
import type { SourceFile } from './source.ts';
import type { MatrixCell } from '../model/scenario.ts';
import type { SettingValue } from './settings.ts';

export function checkFaultSets(
  src: SourceFile,
  doc: Record<string, unknown>,
  s: { settings?: unknown; matrix?: unknown; faultSets?: Record<string, unknown> | undefined },
  cells: readonly MatrixCell[] | undefined,
  /** Checks one schedule as faults: is, on the cells that run it (`name`: the set's). */
  checkList: (rawFaults: unknown, at: PropertyKey[], name: string) => ScenarioIssue[],
): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  const raw = typeof doc.faultSets === 'object' && doc.faultSets !== null ? (doc.faultSets as Record<string, unknown>) : {};
  for (const [name, list] of Object.entries(raw)) out.push(...checkList(list, ['faultSets', name], name));
  const names = Object.keys(s.faultSets ?? raw);
  const base = (s.settings as Record<string, SettingValue> | undefined)?.faults;
  const picked = new Set<string>();
  const where = s.matrix && typeof s.matrix === 'object' && 'faults' in s.matrix ? ['matrix', 'faults'] : ['settings', 'faults'];
  for (const c of cells ?? []) {
    const v = c.params.faults ?? base;
    if (typeof v !== 'string') continue;
    picked.add(v);
  }
  if (base !== undefined && typeof base === 'string') picked.add(base);
  for (const name of picked) {
    if (!names.includes(name)) out.push(src.issue(where, `the name of an entry of faultSets: (${names.join(' | ') || 'the scenario has none'})`, `'${name}'`));
  }
  for (const name of names) {
    if (!picked.has(name)) out.push(src.issue(['faultSets', name], `a fault schedule some cell runs (name it in matrix: faults: [...] or settings: faults:)`, 'no cell runs it', { key: true }));
  }
  return out;
}
