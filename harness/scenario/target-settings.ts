// `targetSettings:`: settings that apply to one target's cells only, for a setting another target
// of the run has no equivalent for (NATS picks its own message-block size, so a scenario that
// needs small segments on durolab and Kafka sets segment.bytes there alone). Merged into the
// cells of that target after the target axis is crossed; a cell's own axis value for the same
// setting is a conflict, reported.
import type { ScenarioIssue } from './errors.ts';
import type { SourceFile } from './source.ts';
import type { MatrixCell } from '../model/scenario.ts';
import { cellId, cellLabel } from './matrix.ts';
import type { SettingValue } from './settings.ts';

export interface TargetSettingsOutcome {
  cells: MatrixCell[];
  issues: ScenarioIssue[];
  /** As settings layers (path and values) for the cross-setting checks. */
  layers: Array<{ path: PropertyKey[]; values: Record<string, SettingValue[]> }>;
}

export function applyTargetSettings(
  src: SourceFile,
  perTarget: Readonly<Record<string, Record<string, SettingValue | undefined>>> | undefined,
  cells: readonly MatrixCell[],
  axisTargets: readonly string[] | null,
  axisOrder: readonly string[],
): TargetSettingsOutcome {
  if (!perTarget) return { cells: [...cells], issues: [], layers: [] };
  const issues: ScenarioIssue[] = [];
  const layers: TargetSettingsOutcome['layers'] = [];
  for (const [t, values] of Object.entries(perTarget)) {
    if (!axisTargets?.includes(t)) {
      issues.push(src.issue(['targetSettings', t], `a target of the matrix's target axis (${axisTargets?.join(' | ') ?? 'the scenario has no target axis: put these settings in settings:'})`, `'${t}'`, { key: true }));
      continue;
    }
    layers.push({ path: ['targetSettings', t], values: Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined).map(([k, v]) => [k, [v as SettingValue]])) });
  }
  const out = cells.map((c) => {
    const extra = perTarget[String(c.params.target)];
    if (!extra) return c;
    const added: Record<string, SettingValue> = {};
    for (const [k, v] of Object.entries(extra)) {
      if (v === undefined) continue;
      if (c.params[k] !== undefined && c.params[k] !== v) {
        issues.push(src.issue(['targetSettings', String(c.params.target), k], `a setting the matrix does not set for this target's cells too (cell ${c.id} has ${k}: ${String(c.params[k])})`, String(v)));
        continue;
      }
      added[k] = v;
    }
    const params = { ...c.params, ...added };
    const order = ['target', ...axisOrder];
    return { id: cellId(params, order), label: `${c.label}, ${cellLabel(added, Object.keys(added))}`, params };
  });
  return { cells: out, issues, layers };
}
